import { PostHog } from 'posthog-node-v5';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessDeps } from '../../commands/access/accessDeps.ts';
import { createProject } from '../../commands/access/createProject.ts';
import { capture } from '../support/capture.ts';
import { decideRaw } from '../support/decide.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { adminUserId, createFlag, expectError, newUser } from './helpers.ts';

/**
 * Cohorts (issue #10, first increment): dynamic cohorts event sourced like flags, and flags that
 * target them through /decide and posthog-node's local evaluation.
 */
let t: TestService;
const base = () => `/api/projects/${t.projectId}/cohorts/`;
const acme = {
  properties: {
    type: 'OR',
    values: [
      {
        type: 'AND',
        values: [{ key: 'email', type: 'person', operator: 'icontains', value: '@acme.com' }],
      },
    ],
  },
};

beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => t?.close());

describe('cohorts CRUD', () => {
  it('creates, lists, reads, renames and soft-deletes a cohort', async () => {
    const created = await t.api('POST', base(), { name: 'Acme', filters: acme });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      name: 'Acme',
      description: '',
      filters: acme,
      groups: [],
      is_static: false,
      is_calculating: false,
      count: null,
      deleted: false,
      version: 1,
    });
    const id = created.body.id as number;
    const list = await t.api('GET', base());
    expect(list.body.results.map((c: { id: number }) => c.id)).toContain(id);
    expect((await t.api('GET', `${base()}${id}/`)).body.name).toBe('Acme');

    const renamed = await t.api('PATCH', `${base()}${id}/`, { name: 'Acme Inc' });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Acme Inc', version: 2, filters: acme });
    // Nothing changes: no new version.
    expect((await t.api('PATCH', `${base()}${id}/`, { name: 'Acme Inc' })).body.version).toBe(2);

    expect((await t.api('DELETE', `${base()}${id}/`)).status).toBe(405);
    const deleted = await t.api('PATCH', `${base()}${id}/`, { deleted: true });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toMatchObject({ id, deleted: true, version: 3 });
    expectError(await t.api('GET', `${base()}${id}/`), 404, { code: 'not_found' });
    expectError(await t.api('PATCH', `${base()}${id}/`, { name: 'back' }), 404);
    const after = await t.api('GET', base());
    expect(after.body.results.map((c: { id: number }) => c.id)).not.toContain(id);
  });

  it('refuses behavioural filters without their window, bad filters, words for ids, and missing scopes', async () => {
    const behavioural = {
      properties: {
        type: 'AND',
        values: [{ key: '$pageview', type: 'behavioral', value: 'performed_event' }],
      },
    };
    expectError(await t.api('POST', base(), { name: 'b', filters: behavioural }), 400);
    expectError(await t.api('POST', base(), { name: 'x', filters: { properties: [] } }), 400);
    expectError(await t.api('POST', base(), { filters: acme }), 400, { attr: 'name' });
    expectError(await t.api('GET', `${base()}nope/`), 404, { code: 'not_found' });
    const { key } = await newUser(t, { scopes: ['feature_flag:read'] });
    expectError(await t.api('GET', base(), undefined, key), 403);
    expectError(await t.api('POST', base(), { name: 'n', filters: acme }, key), 403);
  });
});

describe('flags that target a cohort', () => {
  it('gives the same value through /decide (request or stored properties) and posthog-node local evaluation', async () => {
    const cohort = (await t.api('POST', base(), { name: 'Acme people', filters: acme })).body;
    await createFlag(t, {
      key: 'acme-beta',
      filters: {
        groups: [
          {
            properties: [{ key: 'id', type: 'cohort', value: cohort.id }],
            rollout_percentage: 100,
          },
        ],
      },
    });
    const people = { 'u-acme': 'a@ACME.com', 'u-other': 'b@other.org' };
    const expected = { 'u-acme': true, 'u-other': false };

    for (const [id, email] of Object.entries(people)) {
      const res = await decideRaw(t.url, '/decide/?v=3', {
        token: t.projectApiKey,
        distinct_id: id,
        person_properties: { email },
      });
      expect(res.body.errorsWhileComputingFlags).toBe(false);
      expect(res.body.featureFlags['acme-beta'], id).toBe(expected[id as keyof typeof expected]);
    }

    // Stored properties: the persons read model knows the email.
    await capture(t, [
      { event: '$set', properties: { distinct_id: 'stored-acme', $set: { email: 'c@acme.com' } } },
    ]);
    let stored: unknown;
    for (let i = 0; i < 50 && stored !== true; i++) {
      const res = await decideRaw(t.url, '/decide/?v=3', {
        token: t.projectApiKey,
        distinct_id: 'stored-acme',
      });
      stored = res.body.featureFlags['acme-beta'];
      if (stored !== true) await new Promise((r) => setTimeout(r, 50));
    }
    expect(stored).toBe(true);

    const local = await t.api(
      'GET',
      `/api/feature_flag/local_evaluation?token=${t.projectApiKey}&send_cohorts`,
    );
    expect(local.body.cohorts[String(cohort.id)]).toEqual(acme.properties);
    const withoutCohorts = await t.api(
      'GET',
      `/api/feature_flag/local_evaluation?token=${t.projectApiKey}`,
    );
    expect(withoutCohorts.body.cohorts).toEqual({});

    const client = new PostHog(t.projectApiKey, {
      host: t.url,
      personalApiKey: t.personalApiKey,
      fetchRetryCount: 0,
      featureFlagsPollingInterval: 60_000,
    });
    try {
      await client.reloadFeatureFlags();
      for (const [id, email] of Object.entries(people)) {
        const got = await client.getFeatureFlag('acme-beta', id, {
          personProperties: { email },
          onlyEvaluateLocally: true,
          sendFeatureFlagEvents: false,
        });
        expect(got, id).toBe(expected[id as keyof typeof expected]);
      }
    } finally {
      await client.shutdown();
    }
  });
});

describe('GET persons/cohorts/?person_id=', () => {
  it('lists the cohorts a person belongs to, by uuid or id', async () => {
    const hasEmail = (
      await t.api('POST', base(), {
        name: 'Has an email',
        filters: {
          properties: {
            type: 'AND',
            values: [{ key: 'email', type: 'person', operator: 'is_set', value: 'is_set' }],
          },
        },
      })
    ).body;
    const acmeCohort = (await t.api('POST', base(), { name: 'Acme (again)', filters: acme })).body;
    await capture(t, [
      { event: '$set', properties: { distinct_id: 'pc-acme', $set: { email: 'x@acme.com' } } },
      { event: '$set', properties: { distinct_id: 'pc-other', $set: { email: 'y@other.org' } } },
      { event: '$set', properties: { distinct_id: 'pc-none', $set: { plan: 'free' } } },
    ]);
    const personOf = async (distinctId: string) => {
      for (let i = 0; i < 50; i++) {
        const res = await t.api(
          'GET',
          `/api/projects/${t.projectId}/persons/?distinct_id=${distinctId}`,
        );
        if (res.body.results?.length) return res.body.results[0] as { id: number; uuid: string };
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`no person for ${distinctId}`);
    };
    const cohortsOf = async (ref: string | number) => {
      const res = await t.api(
        'GET',
        `/api/projects/${t.projectId}/persons/cohorts/?person_id=${ref}`,
      );
      expect(res.status, res.text).toBe(200);
      return (res.body.results as { id: number }[])
        .map((c) => c.id)
        .filter((id) => [hasEmail.id, acmeCohort.id].includes(id));
    };
    const a = await personOf('pc-acme');
    expect(await cohortsOf(a.uuid)).toEqual([hasEmail.id, acmeCohort.id]);
    expect(await cohortsOf(a.id)).toEqual([hasEmail.id, acmeCohort.id]);
    expect(await cohortsOf((await personOf('pc-other')).uuid)).toEqual([hasEmail.id]);
    expect(await cohortsOf((await personOf('pc-none')).uuid)).toEqual([]);
    expectError(
      await t.api('GET', `/api/projects/${t.projectId}/persons/cohorts/?person_id=nope`),
      400,
      { attr: 'person_id' },
    );
    expectError(
      await t.api(
        'GET',
        `/api/projects/${t.projectId}/persons/cohorts/?person_id=00000000-0000-4000-8000-000000000000`,
      ),
      404,
    );
  });
});

describe('POST feature_flags/:id/create_static_cohort_for_flag/', () => {
  it('holds exactly the persons /decide turns the flag on for, and lists them in persons/cohorts', async () => {
    // A project of its own, so the expected set is every person there.
    const token = `phc_static_${process.pid}_${Date.now().toString(36)}`;
    const { projectId } = await createProject(accessDeps(t.service.ctx), {
      name: 'static cohort for flag',
      ownerUserId: await adminUserId(t),
      projectApiKey: token,
    });
    const target = (
      await t.api('POST', `/api/projects/${projectId}/cohorts/`, {
        name: 'Static source',
        filters: acme,
      })
    ).body;
    const flag = await createFlag(
      t,
      {
        key: 'acme-half',
        filters: {
          groups: [
            {
              properties: [{ key: 'id', type: 'cohort', value: target.id }],
              rollout_percentage: 50,
            },
          ],
        },
      },
      { projectId },
    );
    const ids = Array.from({ length: 40 }, (_, i) => `sc-${i}`);
    await capture(
      { url: t.url, projectApiKey: token },
      ids.map((id, i) => ({
        event: '$set',
        properties: {
          distinct_id: id,
          $set: { email: i % 4 === 0 ? `${id}@other.org` : `${id}@acme.com` },
        },
      })),
    );
    // Wait until the persons read model has all of them.
    for (let i = 0; i < 100; i++) {
      const res = await t.api('GET', `/api/projects/${projectId}/persons/?distinct_id=sc-39`);
      if (res.body.results?.length) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const on = new Set<string>();
    for (const id of ids) {
      const res = await decideRaw(t.url, '/decide/?v=3', { token, distinct_id: id });
      if (res.body.featureFlags['acme-half'] === true) on.add(id);
    }
    // The rollout and the cohort both matter: some acme persons are in, no other.org person is.
    expect(on.size).toBeGreaterThan(5);
    expect(on.size).toBeLessThan(30);
    expect([...on].some((id) => Number(id.slice(3)) % 4 === 0)).toBe(false);

    // posthog-node evaluating locally (definitions with send_cohorts) from the same properties
    // gives the same value for every person (issue #10, "Done when" 2).
    const sdk = new PostHog(token, {
      host: t.url,
      personalApiKey: t.personalApiKey,
      featureFlagsPollingInterval: 60_000,
      fetchRetryCount: 0,
    });
    try {
      await sdk.reloadFeatureFlags();
      for (const [i, id] of ids.entries()) {
        const email = i % 4 === 0 ? `${id}@other.org` : `${id}@acme.com`;
        const value = await sdk.getFeatureFlag('acme-half', id, {
          personProperties: { email },
          onlyEvaluateLocally: true,
          sendFeatureFlagEvents: false,
        });
        expect(value === true, `local evaluation of ${id}`).toBe(on.has(id));
      }
    } finally {
      await sdk.shutdown();
    }

    const res = await t.api(
      'POST',
      `/api/projects/${projectId}/feature_flags/${flag.id}/create_static_cohort_for_flag/`,
      {},
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.cohort).toMatchObject({ is_static: true, count: on.size, deleted: false });
    expect(res.body.cohort.name).toMatch(/^Users with feature flag acme-half enabled at /);

    const cohortId = res.body.cohort.id as number;
    for (const id of ids) {
      const person = (await t.api('GET', `/api/projects/${projectId}/persons/?distinct_id=${id}`))
        .body.results[0];
      const listed = (
        await t.api('GET', `/api/projects/${projectId}/persons/cohorts/?person_id=${person.uuid}`)
      ).body.results.map((c: { id: number }) => c.id);
      expect(listed.includes(cohortId), id).toBe(on.has(id));
    }
    // Static cohorts are not sent to SDKs: they have no definition.
    const local = await t.api(
      'GET',
      `/api/feature_flag/local_evaluation?token=${token}&send_cohorts`,
    );
    expect(Object.keys(local.body.cohorts)).not.toContain(String(cohortId));
    expectError(
      await t.api(
        'POST',
        `/api/projects/${projectId}/feature_flags/999999/create_static_cohort_for_flag/`,
        {},
      ),
      404,
    );
  });
});
