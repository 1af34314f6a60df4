import { PostHog } from 'posthog-node-v5';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type {
  FlagCondition,
  FlagProperty,
} from '../../../../commands/featureFlags/model/flagFilters.ts';
import {
  type EvaluableFlag,
  evaluateFlags,
  flagValue,
} from '../../../../projections/featureFlags/evaluation/evaluateFlags.ts';

/*
 * Differential check against the real posthog-node 5 local evaluator (the devDependency
 * posthog-node-v5, served definitions by a fake fetch; no network). Random person and group
 * flags and people, from a fixed seed: wherever both sides decide a flag, they must give the same
 * value.
 * - partial: the evaluator gets the properties as a request's (missing keys are unknown), as
 *   posthog-node does. posthog-node leaves out what it would ask the server. The evaluator is
 *   stricter in one way: an unresolved condition before a match leaves the flag unresolved, where
 *   posthog-node skips it and returns the later match.
 * - complete: the evaluator gets them as all the subject has, compared only where the subject has
 *   every key the flag filters on. (For a missing key posthog-node skips the condition, while the
 *   server lets a negative operator such as `not_icontains` match, and PostHog's own local and
 *   remote answers differ the same way.)
 */

function prng(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = prng(20261123);
const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;

// biome-ignore format: one line per kind of value reads better than one per value
const OPERATORS = [
  'exact', 'is_not', 'is_set', 'is_not_set', 'icontains', 'not_icontains', 'regex', 'not_regex',
  'gt', 'gte', 'lt', 'lte', 'is_date_before', 'is_date_after', 'starts_with', 'not_starts_with',
  'ends_with', 'not_ends_with', 'semver_eq', 'semver_neq', 'semver_gt', 'semver_gte', 'semver_lt',
  'semver_lte', 'semver_tilde', 'semver_caret', 'semver_wildcard',
];
// biome-ignore format: as above
const FILTER_VALUES: unknown[] = [
  'value', 'VALUE', 'Val', 'lue', '3', '1', '30', 'true', 'False', 'null', '', 'a@b.com', '123aloha',
  '1.2.3', '1.2', 'v2.0.0', '1.*', '0.0.3',
  '2022-05-01', '2030-01-01T00:00:00Z', '-7d', '1m', '-1y',
  '\\.com$', '^val', '[0-9]+', 'a|b', '(x+x+)+y', 'x{2,}',
  1, 3, 100, 1.5, true, false, ['value', 'other'], ['1', '2'], ['true'],
];
// biome-ignore format: as above
const PERSON_VALUES: unknown[] = [
  'value', 'Value2', 'VALUE', 'prevalue', 'a@b.com', 'B@C.COM', '3', '323', '100', '9', 'true',
  'null', '', 'three', 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
  '1.2.3', '1.3.0-beta.1', 'v1.2.3', '0.0.4', '2.0.0',
  '2022-04-30', '2021-01-01T10:00:00Z', '2029-12-31',
  1, 3, 23, 100, -1, 0, 1.5, true, false, null,
];
const KEYS = ['k1', 'k2', 'k3'];
const VARIANTS = [
  { key: 'a', rollout_percentage: 50 },
  { key: 'b', rollout_percentage: 30 },
  { key: 'c', rollout_percentage: 20 },
];
const MAPPING = { '0': 'company' };

function randomFlag(i: number): EvaluableFlag {
  const multivariate = random() < 0.3;
  // A fifth are group flags on "company" (index 0), filtering on group properties.
  const group = random() < 0.2;
  const type = group
    ? { type: 'group' as const, group_type_index: 0 }
    : { type: 'person' as const };
  const property = (): FlagProperty => ({
    key: pick(KEYS),
    operator: pick(OPERATORS) as FlagProperty['operator'],
    value: pick(FILTER_VALUES),
    ...type,
  });
  const condition = (): FlagCondition => ({
    properties: Array.from({ length: pick([0, 1, 1, 2]) }, property),
    rollout_percentage: pick([null, 0, 25, 50, 100, 100]),
    ...(multivariate && random() < 0.3 ? { variant: pick(['a', 'c', 'missing']) } : {}),
  });
  return {
    id: i + 1,
    key: `flag-${i}`,
    active: random() < 0.95,
    filters: {
      groups: Array.from({ length: pick([1, 1, 2, 3]) }, condition),
      ...(multivariate ? { multivariate: { variants: VARIANTS } } : {}),
      ...(random() < 0.2 ? { early_exit: true } : {}),
      ...(group ? { aggregation_group_type_index: 0 } : {}),
    },
  };
}

type Person = (typeof people)[number];
/** Whether the subject has every key the flag's filters read. */
function hasEveryKey(flag: EvaluableFlag, person: Person): boolean {
  const source =
    flag.filters?.aggregation_group_type_index === 0
      ? person.company?.properties
      : person.properties;
  const keys = (flag.filters?.groups ?? []).flatMap((c) => (c.properties ?? []).map((p) => p.key));
  return source !== undefined && keys.every((k) => Object.hasOwn(source, k));
}

const someProperties = () =>
  Object.fromEntries(KEYS.filter(() => random() < 0.7).map((k) => [k, pick(PERSON_VALUES)]));
const flags = Array.from({ length: 120 }, (_, i) => randomFlag(i));
const people = Array.from({ length: 40 }, (_, i) => ({
  distinctId: `person-${i}`,
  properties: someProperties(),
  company: random() < 0.7 ? { key: `company-${i % 7}`, properties: someProperties() } : undefined,
}));

describe('parity with posthog-node 5 local evaluation', () => {
  let client: PostHog;
  beforeAll(() => {
    // posthog-node warns (once) about the flags it will defer to the server.
    vi.spyOn(console, 'warn').mockImplementation(() => {});
    const definitions = JSON.stringify({ flags, group_type_mapping: MAPPING, cohorts: {} });
    client = new PostHog('phc_parity', {
      host: 'http://posthog.invalid',
      personalApiKey: 'phx_parity',
      featureFlagsPollingInterval: 600_000,
      fetchRetryCount: 0,
      fetch: async (url) => {
        const ok = url.includes('/flags/definitions');
        const body = ok ? definitions : '{}';
        return {
          status: ok ? 200 : 500,
          text: async () => body,
          json: async () => JSON.parse(body),
          headers: { get: () => null },
        };
      },
    });
  });
  afterAll(async () => {
    await client.shutdown();
    vi.restoreAllMocks();
  });

  it.each([
    ['partial', false],
    ['complete', true],
  ])('gives the same value wherever both decide (%s properties)', async (_, complete) => {
    const counts = { both: 0, onlyPosthogNode: 0, onlyHere: 0, neither: 0 };
    const disagreements: string[] = [];
    for (const person of people) {
      const theirs = await client.getAllFlags(person.distinctId, {
        personProperties: person.properties,
        ...(person.company && {
          groups: { company: person.company.key },
          groupProperties: { company: person.company.properties },
        }),
        onlyEvaluateLocally: true,
      });
      const ours = evaluateFlags(
        flags,
        {
          distinctId: person.distinctId,
          person: { properties: person.properties, complete },
          groupTypeMapping: MAPPING,
          groups: person.company && { company: { ...person.company, complete } },
        },
        { now: () => new Date() },
      );
      for (const result of ours) {
        const flag = flags.find((f) => f.key === result.key)!;
        if (complete && !hasEveryKey(flag, person)) continue;
        const their = theirs[result.key];
        const mine = flagValue(result);
        if (their !== undefined && mine !== undefined) {
          counts.both++;
          if (their !== mine) {
            disagreements.push(
              `${result.key} ${JSON.stringify(person.properties)}: posthog-node ${String(their)}, here ${String(mine)}: ${JSON.stringify(flag.filters)}`,
            );
          }
        } else if (their !== undefined) counts.onlyPosthogNode++;
        else if (mine !== undefined) counts.onlyHere++;
        else counts.neither++;
      }
    }
    expect(disagreements).toEqual([]);
    // Enough decided by both to mean something (the counts are fixed by the seed). With every key
    // present, whatever posthog-node decides locally the evaluator decides too.
    expect(counts.both, JSON.stringify(counts)).toBeGreaterThan(complete ? 1500 : 2500);
    if (complete) expect(counts.onlyPosthogNode, JSON.stringify(counts)).toBe(0);
  });
});
