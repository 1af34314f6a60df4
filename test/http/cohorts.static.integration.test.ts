import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import { decideRaw } from '../support/decide.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { createFlag, expectError } from './helpers.ts';

// Static cohorts (issue #10): a CSV of distinct ids uploaded as PostHog's UI does
// (multipart/form-data), more added by PATCH, and flags on them answered by /decide.
let t: TestService;
const cohortsPath = () => `/api/projects/${t.projectId}/cohorts/`;

/** multipart/form-data with text fields and one `csv` file, as a browser sends it. */
async function upload(
  method: 'POST' | 'PATCH',
  path: string,
  fields: Record<string, string>,
  csv: string,
) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('csv', new Blob([csv], { type: 'text/csv' }), 'ids.csv');
  const res = await fetch(`${t.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${t.personalApiKey}` },
    body: form,
  });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as any, text };
}

const personUuid = async (distinctId: string) =>
  (await t.api('GET', `/api/projects/${t.projectId}/persons/?distinct_id=${distinctId}`)).body
    .results[0].uuid as string;

beforeAll(async () => {
  t = await startTestService();
  await capture(
    { url: t.url, projectApiKey: t.projectApiKey },
    ['sa-1', 'sa-2', 'sa-3', 'sa-4'].map((id) => ({
      event: '$set',
      properties: { distinct_id: id, $set: { plan: 'pro' } },
    })),
  );
  for (let i = 0; i < 100; i++) {
    const res = await t.api('GET', `/api/projects/${t.projectId}/persons/?distinct_id=sa-4`);
    if (res.body.results?.length) break;
    await new Promise((r) => setTimeout(r, 50));
  }
}, 60_000);
afterAll(async () => t?.close());

describe('static cohorts from a CSV file', () => {
  let cohortId: number;
  let flagKey: string;

  it('creates the cohort from the first column, header and unknown ids skipped', async () => {
    const res = await upload(
      'POST',
      cohortsPath(),
      { name: 'Beta testers', is_static: 'true' },
      'distinct_id,note\nsa-1,first\n"sa-2",second\nnobody-has-this,x\n\nsa-1,again\n',
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ name: 'Beta testers', is_static: true, count: 2 });
    cohortId = res.body.id;
    const listed = await t.api(
      'GET',
      `/api/projects/${t.projectId}/persons/cohorts/?person_id=${await personUuid('sa-1')}`,
    );
    expect(listed.body.results.map((c: { id: number }) => c.id)).toContain(cohortId);
  });

  it('answers flags on it through /decide (evaluation thread and main thread agree)', async () => {
    flagKey = (
      await createFlag(t, {
        filters: {
          groups: [
            {
              properties: [{ key: 'id', type: 'cohort', value: cohortId }],
              rollout_percentage: 100,
            },
          ],
        },
      })
    ).key;
    const values: Record<string, unknown> = {};
    for (const id of ['sa-1', 'sa-2', 'sa-3', 'stranger']) {
      const res = await decideRaw(t.url, '/decide/?v=3', {
        token: t.projectApiKey,
        distinct_id: id,
      });
      expect(res.status).toBe(200);
      expect(res.body.errorsWhileComputingFlags, id).toBe(false);
      values[id] = res.body.featureFlags[flagKey];
    }
    expect(values).toEqual({ 'sa-1': true, 'sa-2': true, 'sa-3': false, stranger: false });
  });

  it('adds persons with a PATCH carrying another CSV file', async () => {
    const res = await upload('PATCH', `${cohortsPath()}${cohortId}/`, {}, 'sa-3\nsa-4\n');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.count).toBe(4);
    const decided = await decideRaw(t.url, '/decide/?v=3', {
      token: t.projectApiKey,
      distinct_id: 'sa-3',
    });
    expect(decided.body.featureFlags[flagKey]).toBe(true);
  });

  it('lists the changes as activity, newest first', async () => {
    await t.api('PATCH', `${cohortsPath()}${cohortId}/`, { name: 'Beta testers (2)' });
    const res = await t.api('GET', `${cohortsPath()}${cohortId}/activity/`);
    expect(res.status, res.text).toBe(200);
    expect(
      res.body.results.map(
        (e: { activity: string; detail: { changes: { field: string; after: unknown }[] } }) => [
          e.activity,
          e.detail.changes.map((c) => [c.field, c.after]),
        ],
      ),
    ).toEqual([
      ['updated', [['name', 'Beta testers (2)']]],
      ['updated', [['persons', { added: 2 }]]],
      [
        'created',
        [
          ['name', 'Beta testers'],
          ['description', ''],
          ['filters', { properties: { type: 'AND', values: [] } }],
          ['persons', { added: 2 }],
        ],
      ],
    ]);
    expect(res.body.results[0].user.email).toEqual(expect.any(String));
    const all = await t.api('GET', `${cohortsPath()}activity/`);
    expect(all.body.count).toBeGreaterThanOrEqual(3);
  });

  it('creates an empty static cohort from JSON', async () => {
    const res = await t.api('POST', cohortsPath(), { name: 'Empty', is_static: true });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ is_static: true, count: 0 });
  });

  it('refuses a CSV for a dynamic cohort, and a cohort without filters or CSV', async () => {
    expectError(
      await upload('POST', cohortsPath(), { name: 'x', is_static: 'false' }, 'sa-1\n'),
      400,
    );
    const dynamic = await t.api('POST', cohortsPath(), {
      name: 'Pro',
      filters: {
        properties: { type: 'AND', values: [{ key: 'plan', type: 'person', value: 'pro' }] },
      },
    });
    expect(dynamic.status).toBe(201);
    const patched = await upload('PATCH', `${cohortsPath()}${dynamic.body.id}/`, {}, 'sa-1\n');
    expect(patched.status).toBe(400);
    expect(patched.body.attr).toBe('csv');
    expectError(await t.api('POST', cohortsPath(), { name: 'No filters' }), 400);
  });
});
