import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import { flagsPath } from '../http/helpers.ts';
import { capture } from '../support/capture.ts';
import type { TestService } from '../support/testService.ts';

/**
 * The flags the SDK end-to-end suites evaluate, created through the REST API as a user would, and what each of them
 * must answer, computed here from PostHog's published hashing (sha1 of `<key>.<id><salt>`, 15 hex digits / 2^60-1)
 * rather than by the server's evaluator, so the SDKs agreeing with each other is not the only check.
 */
export const FLAG = {
  rollout: 'e2e-rollout',
  multivariate: 'e2e-multivariate',
  jsonPayload: 'e2e-json-payload',
  group: 'e2e-group',
  targeted: 'e2e-targeted',
} as const;
export const FLAG_KEYS = Object.values(FLAG);
export const GROUP_TYPE = 'company';

export const VARIANTS = [
  { key: 'control', rollout_percentage: 50 },
  { key: 'test', rollout_percentage: 30 },
  { key: 'other', rollout_percentage: 20 },
] as const;
/** What the SDKs hand back for each payload (they JSON-parse the stored text). */
export const PAYLOAD = {
  control: { color: 'blue' },
  test: { color: 'green', items: [1, 2] },
  other: 'plain text',
  jsonPayload: { banner: { text: 'Hello', items: [1, 2, 3] }, enabled: true, ratio: 0.25 },
} as const;

const json = (v: unknown) => JSON.stringify(v);

/** Group type `company` at index 0 (from `$groupidentify`), the companies' stored plans, then the five flags. */
export async function createScenario(t: TestService, companies: number): Promise<void> {
  await capture(
    t,
    Array.from({ length: companies }, (_, c) => ({
      event: '$groupidentify',
      properties: {
        distinct_id: `$${GROUP_TYPE}_${companyKey(c)}`,
        $group_type: GROUP_TYPE,
        $group_key: companyKey(c),
        $group_set: { plan: planOf(c) },
      },
    })),
  );
  const types = await t.api('GET', `/api/projects/${t.projectId}/groups_types/`);
  expect(types.status, types.text).toBe(200);
  expect(types.body).toEqual([
    expect.objectContaining({ group_type: GROUP_TYPE, group_type_index: 0 }),
  ]);

  const flags: Record<string, unknown>[] = [
    { key: FLAG.rollout, filters: { groups: [{ properties: [], rollout_percentage: 40 }] } },
    {
      key: FLAG.multivariate,
      filters: {
        groups: [{ properties: [], rollout_percentage: 80 }],
        multivariate: { variants: VARIANTS },
        payloads: {
          control: json(PAYLOAD.control),
          test: json(PAYLOAD.test),
          other: json(PAYLOAD.other),
        },
      },
    },
    {
      key: FLAG.jsonPayload,
      filters: {
        groups: [{ properties: [], rollout_percentage: 100 }],
        payloads: { true: json(PAYLOAD.jsonPayload) },
      },
    },
    {
      key: FLAG.group,
      filters: {
        aggregation_group_type_index: 0,
        groups: [
          {
            properties: [
              {
                key: 'plan',
                value: 'enterprise',
                operator: 'exact',
                type: 'group',
                group_type_index: 0,
              },
            ],
            rollout_percentage: 100,
          },
          { properties: [], rollout_percentage: 30 },
        ],
      },
    },
    {
      key: FLAG.targeted,
      filters: {
        groups: [
          {
            properties: [
              { key: 'email', value: 'example.com', operator: 'icontains', type: 'person' },
            ],
            rollout_percentage: 100,
          },
          {
            properties: [
              { key: 'country', value: ['DE', 'FR'], operator: 'exact', type: 'person' },
            ],
            rollout_percentage: 50,
          },
        ],
      },
    },
  ];
  for (const flag of flags) {
    const res = await t.api('POST', flagsPath(t.projectId), { active: true, ...flag });
    expect(res.status, res.text).toBe(201);
  }
}

export const companyKey = (c: number) => `co-${c}`;
const planOf = (c: number) => (c % 2 === 0 ? 'enterprise' : 'free');

export type Subject = {
  distinctId: string;
  personProperties: Record<string, string>;
  groups: Record<string, string>;
  groupProperties: Record<string, Record<string, string>>;
};

/** Person number `i`: an email, a country and a company, so local evaluation can decide every flag. */
export function subject(i: number, companies: number): Subject {
  const c = i % companies;
  return {
    distinctId: `e2e-user-${i}`,
    personProperties: {
      email: i % 3 === 0 ? `user${i}@EXAMPLE.com` : `user${i}@mail.test`,
      country: ['DE', 'FR', 'US', 'GB', 'de'][i % 5]!,
    },
    groups: { [GROUP_TYPE]: companyKey(c) },
    groupProperties: { [GROUP_TYPE]: { plan: planOf(c) } },
  };
}

/** PostHog's bucketing hash in [0, 1]. */
export function bucket(key: string, id: string, salt = ''): number {
  const hex = createHash('sha1').update(`${key}.${id}${salt}`, 'utf8').digest('hex');
  // LONG_SCALE, 2^60 - 1, is 2^60 once a double.
  return Number.parseInt(hex.slice(0, 15), 16) / 2 ** 60;
}

function variantOf(key: string, id: string): string {
  const h = bucket(key, id, 'variant');
  let min = 0;
  for (const v of VARIANTS) {
    const max = min + v.rollout_percentage / 100;
    if (h >= min && h < max) return v.key;
    min = max;
  }
  throw new Error('variants cover [0, 1)');
}

export type Expected = {
  flags: Record<string, boolean | string>;
  /** payloads of the flags that are on, as the SDKs return them (parsed) */
  payloads: Record<string, unknown>;
};

export function expectedFor(
  s: Pick<Subject, 'distinctId' | 'personProperties' | 'groups' | 'groupProperties'>,
): Expected {
  const id = s.distinctId;
  const company = s.groups[GROUP_TYPE];
  const email = s.personProperties.email?.toLowerCase();
  const country = s.personProperties.country?.toLowerCase();
  const flags: Record<string, boolean | string> = {
    [FLAG.rollout]: bucket(FLAG.rollout, id) <= 0.4,
    [FLAG.multivariate]:
      bucket(FLAG.multivariate, id) <= 0.8 ? variantOf(FLAG.multivariate, id) : false,
    [FLAG.jsonPayload]: true,
    [FLAG.group]:
      company !== undefined &&
      (s.groupProperties[GROUP_TYPE]?.plan === 'enterprise' || bucket(FLAG.group, company) <= 0.3),
    [FLAG.targeted]:
      (email?.includes('example.com') ?? false) ||
      ((country === 'de' || country === 'fr') && bucket(FLAG.targeted, id) <= 0.5),
  };
  const payloads: Record<string, unknown> = { [FLAG.jsonPayload]: PAYLOAD.jsonPayload };
  const variant = flags[FLAG.multivariate];
  if (typeof variant === 'string') payloads[FLAG.multivariate] = PAYLOAD[variant as 'control'];
  return { flags, payloads };
}
