/**
 * /flags and /decide under heavy requests (issue #26 item 3): a per-request deadline, property
 * values bounded for regex matching, bounded queues on the evaluation threads (never the main
 * thread), fair sharing between projects, and bounded `groups` / properties.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessDeps } from '../../commands/access/accessDeps.ts';
import { createProject } from '../../commands/access/createProject.ts';
import { decideRaw } from '../support/decide.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { adminUserId, flagsPath } from './helpers.ts';

type Project = { id: number; token: string };

async function project(t: TestService): Promise<Project> {
  const made = await createProject(accessDeps(t.service.ctx), {
    name: `budget-${Math.random()}`,
    ownerUserId: await adminUserId(t),
  });
  return { id: made.projectId, token: made.projectApiKey };
}

async function flag(t: TestService, projectId: number, body: Record<string, unknown>) {
  const res = await t.api('POST', flagsPath(projectId), body);
  expect(res.status, res.text).toBe(201);
}

/**
 * Conditions of the heavy flag, each a regex whose NFA keeps many threads alive over a long value
 * of "a" until the step budget stops it (a few ms each). Enough that one evaluation outlasts the
 * 1 s deadline and the waits below on a fast machine too: with 200, a quiet machine finished all of
 * them in under 600 ms and the deadline and queue tests passed or failed by the machine's speed.
 */
const HEAVY_CONDITIONS = 600;
const heavyFlag = {
  key: 'heavy',
  name: 'heavy',
  filters: {
    groups: Array.from({ length: HEAVY_CONDITIONS }, (_, i) => ({
      properties: [{ key: 'email', operator: 'regex', value: `(a|aa)*b${i}`, type: 'person' }],
      rollout_percentage: 100,
    })),
  },
};
const onFlag = { key: 'on', name: 'on', filters: { groups: [{ rollout_percentage: 100 }] } };

const flags = (t: TestService, token: string, body: Record<string, unknown> = {}, v = '2') =>
  decideRaw(t.url, `/flags/?v=${v}`, { token, distinct_id: 'someone', ...body });
const heavy = (t: TestService, p: Project, length = 10_000) =>
  flags(t, p.token, { person_properties: { email: 'a'.repeat(length) } });
const health = async (t: TestService) => {
  const started = performance.now();
  const res = await fetch(`${t.url}/_health`, { signal: AbortSignal.timeout(5_000) });
  return { status: res.status, ms: performance.now() - started };
};

describe('deadline, value bound and fair sharing (default threads and queues)', () => {
  let t: TestService;
  let a: Project;
  let b: Project;
  beforeAll(async () => {
    t = await startTestService();
    a = await project(t);
    b = await project(t);
    await flag(t, a.id, heavyFlag);
    await flag(t, a.id, onFlag);
    await flag(t, b.id, onFlag);
  });
  afterAll(async () => t?.close());

  it('600 slow regex conditions: answered within 2 s, the undecided flags left out with errorsWhileComputingFlags', async () => {
    const res = await heavy(t, a);
    expect(res.status, res.text).toBe(200);
    expect(res.ms).toBeLessThan(2_000);
    expect(res.body.errorsWhileComputingFlags).toBe(true);
    expect(res.body.flags.heavy).toBeUndefined();
    const v3 = await decideRaw(t.url, '/decide/?v=3', {
      token: a.token,
      distinct_id: 'someone',
      person_properties: { email: 'a'.repeat(10_000) },
    });
    expect(v3.status).toBe(200);
    expect(v3.ms).toBeLessThan(2_000);
    expect(v3.body.errorsWhileComputingFlags).toBe(true);
    expect(v3.body.featureFlags.heavy).toBeUndefined();
  });

  it('a 200,000-character value is past the regex bound: no match, answered at once', async () => {
    const res = await heavy(t, a, 200_000);
    expect(res.status, res.text).toBe(200);
    expect(res.ms).toBeLessThan(2_000);
    expect(res.body.errorsWhileComputingFlags).toBe(false);
    expect(res.body.flags.heavy.enabled).toBe(false);
    expect(res.body.flags.on.enabled).toBe(true);
  });

  it("another project's /flags answers within 1 s during 4 heavy requests; /_health stays fast", async () => {
    const burst = Array.from({ length: 4 }, () => heavy(t, a));
    await new Promise((r) => setTimeout(r, 100));
    const other = await flags(t, b.token);
    const healthy = await health(t);
    const heavies = await Promise.all(burst);
    expect(other.status, other.text).toBe(200);
    expect(other.body.flags.on.enabled).toBe(true);
    expect(other.body.errorsWhileComputingFlags).toBe(false);
    expect(other.ms).toBeLessThan(1_000);
    expect(healthy.status).toBe(200);
    expect(healthy.ms).toBeLessThan(1_000);
    for (const h of heavies) {
      expect(h.status).toBe(200);
      expect(h.ms).toBeLessThan(2_000);
    }
  });

  it('groups and properties are bounded: a clear 400 past the limit', async () => {
    const groups = (n: number) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`type${i}`, `key${i}`]));
    const ok = await flags(t, b.token, { groups: groups(100) });
    expect(ok.status, ok.text).toBe(200);
    const many = await flags(t, b.token, { groups: groups(20_000) });
    expect(many.status, many.text).toBe(400);
    expect(many.body).toEqual({
      type: 'validation_error',
      code: 'malformed_data',
      detail: 'groups has more than 100 entries',
      attr: 'groups',
    });
    const props = Object.fromEntries(Array.from({ length: 10_001 }, (_, i) => [`p${i}`, i]));
    const wide = await flags(t, b.token, { person_properties: props });
    expect(wide.status).toBe(400);
    expect(wide.body.attr).toBe('person_properties');
    const groupWide = await flags(t, b.token, { group_properties: { company: props } });
    expect(groupWide.status).toBe(400);
    expect(groupWide.body.attr).toBe('group_properties');
  });
});

describe('full queues answer 429 / 503, never the main thread', () => {
  let t: TestService;
  const projects: Project[] = [];
  beforeAll(async () => {
    t = await startTestService({
      FLAG_EVALUATION_THREADS: '1',
      FLAG_EVALUATION_QUEUE_PER_THREAD: '4',
      FLAG_EVALUATION_QUEUE_PER_PROJECT: '2',
      FLAG_EVALUATION_DEADLINE_MS: '3000',
    });
    for (let i = 0; i < 3; i++) {
      const p = await project(t);
      await flag(t, p.id, heavyFlag);
      projects.push(p);
      // The token and definitions cached: the burst below reaches the queues in the order sent.
      expect((await heavy(t, p, 1)).status).toBe(200);
    }
  });
  afterAll(async () => t?.close());

  it("a project past its share gets 429; past the thread's queue, 503 with Retry-After; /_health stays fast", async () => {
    const [a, b, c] = projects as [Project, Project, Project];
    const first = [...Array.from({ length: 4 }, () => heavy(t, a)), heavy(t, b), heavy(t, b)];
    // Queued by then: each admitted job runs far longer than this wait (HEAVY_CONDITIONS).
    await new Promise((r) => setTimeout(r, 250));
    const late = await heavy(t, c);
    const healthy = await health(t);
    const answers = await Promise.all(first);
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    const throttled = answers.find((r) => r.status === 429)!;
    expect(throttled.body).toMatchObject({
      type: 'throttled_error',
      code: 'throttled',
      attr: null,
    });
    expect(late.status, late.text).toBe(503);
    expect(late.body).toEqual({
      type: 'server_error',
      code: 'service_unavailable',
      detail: 'Flag evaluation is at capacity; retry shortly.',
      attr: null,
    });
    expect(healthy.status).toBe(200);
    expect(healthy.ms).toBeLessThan(1_000);
    const counts = t.service.flagEvaluationThreads!.counts();
    expect(counts.onMainThread).toBe(0);
    expect(counts.refused).toBe(3);
  });

  it('the 503 carries Retry-After', async () => {
    const [a, b, c] = projects as [Project, Project, Project];
    const busy = [heavy(t, a), heavy(t, a), heavy(t, b), heavy(t, b)];
    await new Promise((r) => setTimeout(r, 250));
    const res = await fetch(`${t.url}/flags/?v=2`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: c.token, distinct_id: 'x', person_properties: { email: 'a' } }),
    });
    await Promise.all(busy);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('2');
  });
});
