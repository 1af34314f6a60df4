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
  }, 60_000);
});
