import { PostHog as PostHogV4 } from 'posthog-node-v4-decide';
import { PostHog as PostHogV5 } from 'posthog-node-v5';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBackEvents } from '../support/captureReadback.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import {
  createScenario,
  type Expected,
  expectedFor,
  FLAG,
  FLAG_KEYS,
  type Subject,
  subject,
} from './flagScenario.ts';

/**
 * Issue #9, "Done when" 1: real posthog-node releases against the server, remote and local.
 * 4.10.2 is the last release that asks `POST /decide/?v=3` and reads `/api/feature_flag/local_evaluation`;
 * 5.70.0 asks `POST /flags/?v=2` and reads `/flags/definitions`. All four modes must give the values
 * `expectedFor` computes from PostHog's hashing, for 1,000 distinct ids.
 */
const IDS = 1_000;
const COMPANIES = 10;
const CHUNK = 25;

type Client = PostHogV4 | PostHogV5;
type Mode = {
  name: string;
  local: boolean;
  make: (extra?: Record<string, unknown>) => Client;
  /** the flag requests this mode must make (path and query, token masked) */
  expectsPath: RegExp;
};

let t: TestService;
const requests = new Map<string, string[]>();

/** The SDK's fetch, recording every path it asked for under the mode's name. */
const recordingFetch =
  (name: string) =>
  (url: string, options: any): Promise<any> => {
    const u = new URL(url);
    const list = requests.get(name) ?? [];
    list.push(
      `${options?.method ?? 'GET'} ${u.pathname}${u.search.replace(/token=[^&]+/, 'token=…')}`,
    );
    requests.set(name, list);
    return fetch(url, options);
  };

const modes: Mode[] = [
  {
    name: 'posthog-node 4.10.2 remote',
    local: false,
    expectsPath: /^POST \/decide\/\?v=3$/,
    make: (extra) =>
      new PostHogV4(t.projectApiKey, {
        host: t.url,
        fetchRetryCount: 0,
        fetch: recordingFetch('posthog-node 4.10.2 remote'),
        ...extra,
      }),
  },
  {
    name: 'posthog-node 5.70.0 remote',
    local: false,
    expectsPath: /^POST \/flags\/\?v=2$/,
    make: (extra) =>
      new PostHogV5(t.projectApiKey, {
        host: t.url,
        fetchRetryCount: 0,
        fetch: recordingFetch('posthog-node 5.70.0 remote'),
        ...extra,
      }),
  },
  {
    name: 'posthog-node 4.10.2 local',
    local: true,
    expectsPath: /^GET \/api\/feature_flag\/local_evaluation\?token=…&send_cohorts$/,
    make: (extra) =>
      new PostHogV4(t.projectApiKey, {
        host: t.url,
        personalApiKey: t.personalApiKey,
        featureFlagsPollingInterval: 60_000,
        fetchRetryCount: 0,
        fetch: recordingFetch('posthog-node 4.10.2 local'),
        ...extra,
      }),
  },
  {
    name: 'posthog-node 5.70.0 local',
    local: true,
    expectsPath: /^GET \/flags\/definitions\?token=…&send_cohorts$/,
    make: (extra) =>
      new PostHogV5(t.projectApiKey, {
        host: t.url,
        personalApiKey: t.personalApiKey,
        featureFlagsPollingInterval: 60_000,
        fetchRetryCount: 0,
        fetch: recordingFetch('posthog-node 5.70.0 local'),
        ...extra,
      }),
  },
];

beforeAll(async () => {
  t = await startTestService();
  await createScenario(t, COMPANIES);
});
afterAll(async () => {
  await t?.close();
});

const optionsFor = (s: Subject, local: boolean) => ({
  personProperties: s.personProperties,
  groups: s.groups,
  groupProperties: s.groupProperties,
  onlyEvaluateLocally: local,
});

/** What one client answers for one subject: every flag and payload, through the four calls. */
async function observe(client: Client, s: Subject, i: number, local: boolean) {
  const options = { ...optionsFor(s, local), sendFeatureFlagEvents: false };
  const key = FLAG_KEYS[i % FLAG_KEYS.length]!;
  const [all, both, value, payload, snapshot] = await Promise.all([
    client.getAllFlags(s.distinctId, optionsFor(s, local)),
    client.getAllFlagsAndPayloads(s.distinctId, optionsFor(s, local)),
    client.getFeatureFlag(key, s.distinctId, options),
    client.getFeatureFlagPayload(key, s.distinctId, undefined, options),
    // 5.x's replacement for the calls above (they log a deprecation): one evaluation, read per key.
    client instanceof PostHogV5
      ? client.evaluateFlags(s.distinctId, optionsFor(s, local))
      : Promise.resolve(undefined),
  ]);
  const evaluated = snapshot && {
    flags: Object.fromEntries(
      FLAG_KEYS.map((k) => [k, snapshot.getFlag(k, { sendFeatureFlagEvents: false })]),
    ),
    payloads: Object.fromEntries(
      FLAG_KEYS.map((k) => [k, snapshot.getFlagPayload(k) ?? undefined]),
    ),
  };
  return { key, all, both, value, payload, evaluated };
}

function expectAnswers(got: Awaited<ReturnType<typeof observe>>, want: Expected, id: string) {
  expect(got.all, `getAllFlags(${id})`).toEqual(want.flags);
  expect(got.both, `getAllFlagsAndPayloads(${id})`).toEqual({
    featureFlags: want.flags,
    featureFlagPayloads: want.payloads,
  });
  expect(got.value, `getFeatureFlag(${got.key}, ${id})`).toEqual(want.flags[got.key]);
  // "No payload" is undefined in 4.x and null in 5.x, whatever the server says.
  expect(got.payload ?? undefined, `getFeatureFlagPayload(${got.key}, ${id})`).toEqual(
    want.payloads[got.key],
  );
  if (got.evaluated) expect(got.evaluated, `evaluateFlags(${id})`).toEqual(want);
}

describe('posthog-node against the server: 1,000 distinct ids, remote and local', () => {
  const subjects = Array.from({ length: IDS }, (_, i) => subject(i, COMPANIES));
  const expected = subjects.map(expectedFor);

  it('the scenario is not degenerate: each flag is on for some ids and off for others', () => {
    for (const key of FLAG_KEYS.filter((k) => k !== FLAG.jsonPayload)) {
      const on = expected.filter((e) => e.flags[key] !== false).length;
      expect(on, key).toBeGreaterThan(IDS * 0.1);
      expect(on, key).toBeLessThan(IDS * 0.95);
    }
    const variants = new Set(expected.map((e) => e.flags[FLAG.multivariate]));
    expect(variants).toEqual(new Set([false, 'control', 'test', 'other']));
  });

  it.each(modes)(
    '$name: every value and payload as expected',
    { timeout: 120_000 },
    async (mode) => {
      const client = mode.make();
      try {
        if (mode.local) await client.reloadFeatureFlags();
        const started = performance.now();
        for (let from = 0; from < IDS; from += CHUNK) {
          const got = await Promise.all(
            subjects
              .slice(from, from + CHUNK)
              .map((s, j) => observe(client, s, from + j, mode.local)),
          );
          for (const [j, g] of got.entries())
            expectAnswers(g, expected[from + j]!, subjects[from + j]!.distinctId);
        }
        const ms = performance.now() - started;
        console.info(`${mode.name}: ${IDS} ids in ${ms.toFixed(0)} ms`);
      } finally {
        await client.shutdown();
      }
      const paths = requests.get(mode.name) ?? [];
      const flagCalls = paths.filter((p) => !/^POST \/batch\//.test(p));
      expect(flagCalls.length).toBeGreaterThan(0);
      // Local mode never asked the server to evaluate: only the definitions, fetched once or twice.
      for (const p of flagCalls) expect(p).toMatch(mode.expectsPath);
      if (mode.local) expect(flagCalls.length).toBeLessThanOrEqual(3);
    },
  );
});

describe('$feature_flag_called events the SDKs send arrive in the events API', () => {
  it.each(modes)('$name', async (mode) => {
    const client = mode.make({ flushAt: 1, flushInterval: 0 });
    const s = { ...subject(3, COMPANIES), distinctId: `ffc-${mode.name.replace(/\W+/g, '-')}` };
    const want = expectedFor(s);
    try {
      if (mode.local) await client.reloadFeatureFlags();
      for (const key of [FLAG.multivariate, FLAG.targeted, FLAG.group])
        expect(await client.getFeatureFlag(key, s.distinctId, optionsFor(s, mode.local))).toEqual(
          want.flags[key],
        );
    } finally {
      await client.shutdown();
    }
    const events = await readBackEvents(t, s.distinctId, {
      event: '$feature_flag_called',
      count: 3,
      source: 'rest',
    });
    expect(events).toHaveLength(3);
    for (const key of [FLAG.multivariate, FLAG.targeted, FLAG.group]) {
      const e = events.find((x) => x.properties.$feature_flag === key);
      expect(e, key).toBeDefined();
      expect(e!.properties).toMatchObject({
        $feature_flag_response: want.flags[key],
        [`$feature/${key}`]: want.flags[key],
        locally_evaluated: mode.local,
        $lib: 'posthog-node',
      });
      expect(e!.properties).not.toHaveProperty('$feature_flag_error');
    }
  });
});
