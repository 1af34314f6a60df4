import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessDeps } from '../../commands/access/accessDeps.ts';
import { createProject } from '../../commands/access/createProject.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { adminUserId, createFlag, expectError } from './helpers.ts';

// Cohorts bounded (issue #26, item 6): filters name only the project's cohorts.
let t: TestService;
let other: { projectId: number };
const cohorts = (projectId = t.projectId) => `/api/projects/${projectId}/cohorts/`;
const flags = () => `/api/projects/${t.projectId}/feature_flags/`;
const byEmail = {
  properties: { type: 'AND', values: [{ key: 'email', type: 'person', value: 'a@b.c' }] },
};
const onCohort = (id: unknown) => ({
  groups: [{ properties: [{ key: 'id', type: 'cohort', value: id }], rollout_percentage: 100 }],
});
const cohortOfCohort = (id: unknown) => ({
  properties: { type: 'OR', values: [{ key: 'id', type: 'cohort', value: id }] },
});

beforeAll(async () => {
  t = await startTestService();
  other = await createProject(accessDeps(t.service.ctx), {
    name: 'another project',
    ownerUserId: await adminUserId(t),
    projectApiKey: `phc_bounds_${process.pid}_${Date.now().toString(36)}`,
  });
}, 60_000);
afterAll(async () => t?.close());

describe("filters name only the project's cohorts", () => {
  it("refuses a flag on another project's cohort or an unknown one (create and patch), 400 on filters", async () => {
    const foreign = await t.api('POST', cohorts(other.projectId), { name: 'x', filters: byEmail });
    expect(foreign.status, foreign.text).toBe(201);
    const own = await t.api('POST', cohorts(), { name: 'own', filters: byEmail });
    expect(own.status, own.text).toBe(201);

    for (const value of [foreign.body.id, String(foreign.body.id), 2_000_000_000, 'abc']) {
      const res = await t.api('POST', flags(), { key: `f-${value}`, filters: onCohort(value) });
      expectError(res, 400, { code: 'cohort_does_not_exist', attr: 'filters' });
      expect(res.body.detail).toContain(String(value));
    }
    const flag = await createFlag(t, { filters: onCohort(own.body.id) });
    const patched = await t.api('PATCH', `${flags()}${flag.id}/`, {
      filters: onCohort(foreign.body.id),
    });
    expectError(patched, 400, { code: 'cohort_does_not_exist', attr: 'filters' });
    // A deleted cohort of the project is still the project's (/decide reports such a flag).
    await t.api('PATCH', `${cohorts()}${own.body.id}/`, { deleted: true });
    await createFlag(t, { filters: onCohort(own.body.id) });
  });

  it("refuses a cohort that names another project's cohort (create and patch), 400 on filters", async () => {
    const foreign = await t.api('POST', cohorts(other.projectId), { name: 'y', filters: byEmail });
    const created = await t.api('POST', cohorts(), {
      name: 'nested',
      filters: {
        properties: {
          type: 'AND',
          values: [{ type: 'OR', values: [{ key: 'id', type: 'cohort', value: foreign.body.id }] }],
        },
      },
    });
    expectError(created, 400, { code: 'cohort_does_not_exist', attr: 'filters' });
    const own = await t.api('POST', cohorts(), { name: 'own2', filters: byEmail });
    const ok = await t.api('POST', cohorts(), {
      name: 'ok',
      filters: cohortOfCohort(own.body.id),
    });
    expect(ok.status, ok.text).toBe(201);
    const patched = await t.api('PATCH', `${cohorts()}${ok.body.id}/`, {
      filters: cohortOfCohort(foreign.body.id),
    });
    expectError(patched, 400, { code: 'cohort_does_not_exist', attr: 'filters' });
  });
});

const behavioural = (n: number) => ({
  properties: {
    type: 'OR',
    values: Array.from({ length: n }, (_, i) => ({
      type: 'behavioral',
      value: 'performed_event',
      key: `event-${i}`,
      time_value: 30,
      time_interval: 'day',
    })),
  },
});

describe('cohort calculations are bounded and shared fairly between projects', () => {
  it('refuses a cohort with more than 20 behavioural filters (400 on filters)', async () => {
    const res = await t.api('POST', cohorts(), { name: 'too many', filters: behavioural(21) });
    expectError(res, 400, { attr: 'filters' });
    expect(res.body.detail).toContain('20');
    const ok = await t.api('POST', cohorts(), { name: 'at the limit', filters: behavioural(20) });
    expect(ok.status, ok.text).toBe(201);
  });

  it("calculates another project's trivial cohort while one project's heavy ones wait", async () => {
    const heavy: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await t.api('POST', cohorts(other.projectId), {
        name: `heavy ${i}`,
        filters: behavioural(20),
      });
      expect(res.status, res.text).toBe(201);
      heavy.push(res.body.id);
    }
    const started = Date.now();
    const trivial = await t.api('POST', cohorts(), { name: 'trivial', filters: byEmail });
    expect(trivial.status, trivial.text).toBe(201);
    const calculated = async (projectId: number, id: number) =>
      (await t.api('GET', `${cohorts(projectId)}${id}/`)).body.last_calculation !== null;
    while (!(await calculated(t.projectId, trivial.body.id))) {
      expect(Date.now() - started).toBeLessThan(20_000);
      await new Promise((r) => setTimeout(r, 20));
    }
    const tookMs = Date.now() - started;
    const heavyDone = [];
    for (const id of heavy) heavyDone.push(await calculated(other.projectId, id));
    console.log(`trivial cohort calculated after ${tookMs} ms; heavy done: ${heavyDone}`);
    // A global serial queue would calculate it only after every heavy one.
    expect(heavyDone.filter((done) => !done).length).toBeGreaterThan(0);
    // The rest finish before the next tests measure the event loop.
    for (const id of heavy)
      while (!(await calculated(other.projectId, id))) await new Promise((r) => setTimeout(r, 50));
  }, 60_000);
});

/** GET /_health on a connection of its own (fetch's pool may queue it behind the upload). */
const health = () =>
  new Promise<void>((resolve, reject) =>
    http
      .get(`${t.url}/_health`, { agent: false }, (res) => res.resume().on('end', resolve))
      .on('error', reject),
  );

/** POSTs a static cohort's CSV while asking `/_health` every 20 ms; the longest wait for one. */
async function uploadWhilePolling(csv: string) {
  // Built before the polling starts: encoding megabytes here (the server's process) is no server stall.
  const file = new Blob([csv], { type: 'text/csv' });
  const form = new FormData();
  form.append('name', 'uploaded');
  form.append('is_static', 'true');
  form.append('csv', file, 'ids.csv');
  const request = new Request(`${t.url}${cohorts()}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.personalApiKey}` },
    body: form,
  });
  const body = await request.arrayBuffer();
  const headers = Object.fromEntries(request.headers);
  let longest = 0;
  let polling = true;
  const poll = (async () => {
    // The server runs in this process: a stalled event loop also delays the next poll, so the
    // wait counts from when the poll was due, not from when it was sent.
    let due = performance.now();
    while (polling) {
      await health();
      const answered = performance.now();
      longest = Math.max(longest, answered - due);
      await new Promise((r) => setTimeout(r, 20));
      due = answered + 20;
    }
  })();
  const started = performance.now();
  // node:http writes the prepared bytes to the socket at once (fetch streams them through JS).
  const { status, text } = await new Promise<{ status: number; text: string }>(
    (resolve, reject) => {
      const req = http.request(
        `${t.url}${cohorts()}`,
        { method: 'POST', headers, agent: false },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString() }),
          );
        },
      );
      req.on('error', reject);
      req.end(Buffer.from(body));
    },
  );
  const tookMs = performance.now() - started;
  polling = false;
  await poll;
  return { status, body: JSON.parse(text) as any, longest, tookMs };
}

describe("a static cohort's CSV is read without stalling the server", () => {
  it('refuses 6 MB of commas with a 400 naming the line limit, /_health answering throughout', async () => {
    const res = await uploadWhilePolling(','.repeat(6_000_000));
    console.log(
      `commas: ${res.status} in ${res.tookMs.toFixed(0)} ms, /_health ≤ ${res.longest.toFixed(0)} ms`,
    );
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'validation_error', attr: 'csv' });
    // The parse yields: parsed in one go, the 6 MB stalled /_health for seconds. The bound is 1 s:
    // the full suite on 2 cores, beside other work, measured 206, 232 and 577 ms here (scheduling
    // of a new connection on busy cores, not this parse).
    expect(res.longest).toBeLessThan(1_000);
  });

  it('reads 600,000 short rows (repeats and blanks) into a cohort, /_health answering throughout', async () => {
    const rows = Array.from({ length: 600_000 }, (_, i) => (i % 3 === 0 ? '' : `id-${i % 1000}`));
    const res = await uploadWhilePolling(`distinct_id\n${rows.join('\n')}`);
    console.log(
      `rows: ${res.status} in ${res.tookMs.toFixed(0)} ms, /_health ≤ ${res.longest.toFixed(0)} ms`,
    );
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ is_static: true, count: 0 });
    expect(res.longest).toBeLessThan(1_000);
  }, 30_000);
});
