import { PostHog as PostHogV4 } from 'posthog-node-v4';
import { PostHog as PostHogV5 } from 'posthog-node-v5';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessDeps } from '../../commands/access/accessDeps.ts';
import { createProject } from '../../commands/access/createProject.ts';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { adminUserId, createFlag, expectError, flagPath, newUser } from './helpers.ts';

/**
 * Local evaluation (flags.md §5): the three URLs, their auth, the answer's shape, the ETag, and
 * the real posthog-node 4 and 5 clients loading definitions and evaluating them locally.
 */
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

let seq = 0;
/** A fresh project with its own API key, owned by the admin (whose key reaches it). */
async function project(): Promise<{ id: number; token: string }> {
  const token = `phc_localeval_${process.pid}_${++seq}_${Date.now().toString(36)}`;
  const { projectId } = await createProject(accessDeps(t.service.ctx), {
    name: `localeval-${seq}`,
    ownerUserId: await adminUserId(t),
    projectApiKey: token,
  });
  return { id: projectId, token };
}

/** GET with optional headers; the personal key defaults to the admin's. */
async function get(
  path: string,
  opts: { key?: string | null; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any; text: string; etag: string | null }> {
  const key = opts.key === undefined ? t.personalApiKey : opts.key;
  const res = await fetch(`${t.url}${path}`, {
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...opts.headers },
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text ? JSON.parse(text) : undefined,
    text,
    etag: res.headers.get('etag'),
  };
}

const urls = (p: { id: number; token: string }) => [
  `/api/feature_flag/local_evaluation?token=${p.token}&send_cohorts`,
  `/api/feature_flag/local_evaluation/?token=${p.token}`,
  `/api/feature_flag/local_evaluation?api_key=${p.token}&send_cohorts`,
  `/flags/definitions?token=${p.token}&send_cohorts`,
  `/flags/definitions/?token=${p.token}`,
  `/api/projects/${p.id}/feature_flags/local_evaluation/`,
  `/api/projects/${p.id}/feature_flags/local_evaluation?send_cohorts`,
];

const ROLLOUT = { groups: [{ properties: [], rollout_percentage: 50 }] };
const VARIANTS = {
  groups: [{ properties: [], rollout_percentage: 100 }],
  multivariate: {
    variants: [
      { key: 'control', rollout_percentage: 50 },
      { key: 'test', rollout_percentage: 50 },
    ],
  },
  payloads: { test: '{"color":"blue"}' },
};

describe('local evaluation: the answer', () => {
  it('is the same on all URLs: non-deleted flags (inactive included) in the minimal shape, no cohorts', async () => {
    const p = await project();
    const on = await createFlag(t, { key: 'on', filters: ROLLOUT }, { projectId: p.id });
    const off = await createFlag(
      t,
      { key: 'off', active: false, filters: VARIANTS },
      { projectId: p.id },
    );
    const gone = await createFlag(t, { key: 'gone' }, { projectId: p.id });
    expect((await t.api('PATCH', flagPath(p.id, gone.id), { deleted: true })).status).toBe(200);

    const answers = [];
    for (const url of urls(p)) {
      const res = await get(url);
      expect(res.status, `${url}: ${res.text}`).toBe(200);
      answers.push(res.body);
    }
    for (const a of answers) expect(a).toEqual(answers[0]);
    expect(answers[0]).toEqual({
      flags: [
        {
          id: on.id,
          team_id: p.id,
          name: '',
          key: 'on',
          filters: {
            groups: [
              { properties: [], rollout_percentage: 50, aggregation_group_type_index: null },
            ],
            aggregation_group_type_index: null,
          },
          deleted: false,
          active: true,
          ensure_experience_continuity: false,
          has_encrypted_payloads: false,
          version: 1,
          evaluation_runtime: 'all',
          evaluation_tags: [],
        },
        expect.objectContaining({
          id: off.id,
          key: 'off',
          active: false,
          deleted: false,
          filters: expect.objectContaining({
            multivariate: VARIANTS.multivariate,
            payloads: VARIANTS.payloads,
          }),
        }),
      ],
      group_type_mapping: {},
      cohorts: {},
    });
  });

  it('answers 304 to a current If-None-Match, and a new ETag after a PATCH', async () => {
    const p = await project();
    const flag = await createFlag(t, { key: 'etag', filters: ROLLOUT }, { projectId: p.id });
    const url = `/flags/definitions?token=${p.token}&send_cohorts`;
    const first = await get(url);
    expect(first.status).toBe(200);
    expect(first.etag).toMatch(/^"[^"]+"$/); // strong
    // The same definitions give the same ETag on every URL.
    expect((await get(`/api/projects/${p.id}/feature_flags/local_evaluation/`)).etag).toBe(
      first.etag,
    );

    const again = await get(url, { headers: { 'if-none-match': first.etag! } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.etag).toBe(first.etag);
    expect(
      (await get(url, { headers: { 'if-none-match': `"other", W/${first.etag}` } })).status,
    ).toBe(304);
    expect((await get(url, { headers: { 'if-none-match': '"other"' } })).status).toBe(200);

    const patched = await t.api('PATCH', flagPath(p.id, flag.id), { active: false });
    expect(patched.status, patched.text).toBe(200);
    const after = await get(url, { headers: { 'if-none-match': first.etag! } });
    expect(after.status).toBe(200);
    expect(after.etag).not.toBe(first.etag);
    expect(after.body.flags).toEqual([
      expect.objectContaining({ key: 'etag', active: false, version: 2 }),
    ]);
  });

  it('carries the group type mapping once a $groupidentify has been captured', async () => {
    const p = await project();
    await capture(
      t,
      [
        {
          event: '$groupidentify',
          properties: {
            distinct_id: '$company_acme',
            $group_type: 'company',
            $group_key: 'acme',
            $group_set: { name: 'Acme' },
          },
        },
        {
          event: '$groupidentify',
          properties: {
            distinct_id: '$team_red',
            $group_type: 'team',
            $group_key: 'red',
            $group_set: {},
          },
        },
      ],
      { apiKey: p.token },
    );
    const deadline = Date.now() + 20_000;
    let mapping: unknown = {};
    while (Date.now() < deadline) {
      mapping = (await get(`/flags/definitions?token=${p.token}`)).body.group_type_mapping;
      if (Object.keys(mapping as object).length === 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(mapping).toEqual({ '0': 'company', '1': 'team' });
  });
});

describe('local evaluation: auth', () => {
  it('401 without a personal key, with an invalid one, and for an unknown token', async () => {
    const p = await project();
    for (const url of urls(p)) {
      expectError(await get(url, { key: null }), 401, {
        type: 'authentication_error',
        code: 'invalid_personal_api_key',
      });
      expectError(await get(url, { key: 'phx_not_a_key' }), 401, {
        type: 'authentication_error',
        code: 'invalid_personal_api_key',
      });
    }
    for (const url of [
      '/api/feature_flag/local_evaluation?token=phc_nope&send_cohorts',
      '/flags/definitions?token=phc_nope&send_cohorts',
    ])
      expectError(await get(url), 401, {
        type: 'authentication_error',
        code: 'invalid_api_key',
      });
    expectError(await get('/flags/definitions?send_cohorts'), 400, {
      code: 'required',
      attr: 'token',
    });
  });

  it('403 without feature_flag:read, or for a project the key cannot reach; 404 for an unknown project id', async () => {
    const p = await project();
    const noScope = await newUser(t, { projectId: p.id, scopes: ['person:read'] });
    for (const url of urls(p))
      expectError(await get(url, { key: noScope.key }), 403, { code: 'permission_denied' });
    const outsider = await newUser(t, { projectId: t.projectId, scopes: ['feature_flag:read'] });
    for (const url of urls(p).slice(0, 5))
      expectError(await get(url, { key: outsider.key }), 403, { code: 'permission_denied' });
    expectError(
      await get(`/api/projects/${p.id}/feature_flags/local_evaluation/`, { key: outsider.key }),
      404,
    );
    // A member with a read-only key is enough.
    const reader = await newUser(t, { projectId: p.id, scopes: ['feature_flag:read'] });
    expect((await get(urls(p)[3]!, { key: reader.key })).status).toBe(200);
  });
});

describe('local evaluation: real posthog-node clients', () => {
  // sha1-based buckets (flags.md §2), worked out for these keys and ids:
  // `half` at 50 %: user-1 (0.14) in, user-2 (0.854), user-3 (0.656), user-4 (0.858) out;
  // `variant` control/test 50/50: user-1 (0.331) control, user-2 (0.764), user-3 (0.696), user-4 (0.801) test.
  const expected = {
    half: { 'user-1': true, 'user-2': false, 'user-3': false, 'user-4': false },
    variant: { 'user-1': 'control', 'user-2': 'test', 'user-3': 'test', 'user-4': 'test' },
    inactive: { 'user-1': false, 'user-2': false, 'user-3': false, 'user-4': false },
  } as const;

  type Client = {
    reloadFeatureFlags(): Promise<void>;
    getFeatureFlag(
      key: string,
      id: string,
      options: { onlyEvaluateLocally: boolean; sendFeatureFlagEvents: boolean },
    ): Promise<string | boolean | undefined>;
    shutdown(): Promise<void>;
  };
  type Poll = { path: string; status: number; ifNoneMatch: boolean };
  const polls: Poll[] = [];
  /** The clients' own fetch, recording each definitions request. */
  const recordingFetch = async (url: string, options: RequestInit) => {
    const res = await fetch(url, options);
    const headers = new Headers(options.headers);
    polls.push({
      path: new URL(url).pathname,
      status: res.status,
      ifNoneMatch: headers.has('if-none-match'),
    });
    return res;
  };
  const clients: [string, (token: string) => Client, Poll][] = [
    [
      'posthog-node 4 (/api/feature_flag/local_evaluation)',
      (token) =>
        new PostHogV4(token, {
          host: t.url,
          personalApiKey: t.personalApiKey,
          fetchRetryCount: 0,
          featureFlagsPollingInterval: 60_000,
          fetch: recordingFetch as never,
        }) as unknown as Client,
      { path: '/api/feature_flag/local_evaluation', status: 200, ifNoneMatch: false },
    ],
    [
      'posthog-node 5 (/flags/definitions)',
      (token) =>
        new PostHogV5(token, {
          host: t.url,
          personalApiKey: t.personalApiKey,
          fetchRetryCount: 0,
          featureFlagsPollingInterval: 60_000,
          fetch: recordingFetch as never,
        }) as unknown as Client,
      { path: '/flags/definitions', status: 304, ifNoneMatch: true },
    ],
  ];

  for (const [name, make, lastPoll] of clients) {
    it(`${name} loads the definitions and evaluates boolean and multivariate flags locally`, async () => {
      const p = await project();
      await createFlag(t, { key: 'half', filters: ROLLOUT }, { projectId: p.id });
      await createFlag(t, { key: 'variant', filters: VARIANTS }, { projectId: p.id });
      await createFlag(
        t,
        { key: 'inactive', active: false, filters: ROLLOUT },
        { projectId: p.id },
      );
      polls.length = 0;
      const client = make(p.token);
      try {
        await client.reloadFeatureFlags();
        for (const [key, byId] of Object.entries(expected)) {
          for (const [id, value] of Object.entries(byId)) {
            const got = await client.getFeatureFlag(key, id, {
              onlyEvaluateLocally: true,
              sendFeatureFlagEvents: false,
            });
            expect(got, `${key} for ${id}`).toBe(value);
          }
        }
        expect(
          await client.getFeatureFlag('missing', 'user-1', {
            onlyEvaluateLocally: true,
            sendFeatureFlagEvents: false,
          }),
        ).toBeUndefined();
        // Each poll went to the URL of that release. Polling again, posthog-node 5 sends the ETag
        // back, gets a 304 and keeps its flags; posthog-node 4 sends none and gets a 200.
        await client.reloadFeatureFlags();
        expect(
          await client.getFeatureFlag('variant', 'user-1', {
            onlyEvaluateLocally: true,
            sendFeatureFlagEvents: false,
          }),
        ).toBe('control');
        expect(polls.length).toBeGreaterThanOrEqual(2);
        expect(polls[0]).toEqual({ ...lastPoll, status: 200, ifNoneMatch: false });
        expect(polls.at(-1)).toEqual(lastPoll);
      } finally {
        await client.shutdown();
      }
    });
  }
});
