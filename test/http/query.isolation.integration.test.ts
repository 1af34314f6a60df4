import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type IsolationCase, isolationCases } from '../support/queryIsolationCases.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { type SeededProject, seedTwoProjects } from '../support/twoProjects.ts';
import { expectError, newUser } from './helpers.ts';

/**
 * Issue #29, cross-project isolation of `POST /api/projects/:id/query/`: two projects with the
 * same distinct ids, persons, a group and a static cohort, every row marked with its project; a
 * key scoped to project A sends HogQL of every shape (test/support/queryIsolationCases.ts) and
 * never reads a row or value of B. Each positive case also asserts A's own rows are there, so a
 * compiler that answered nothing would fail.
 */
let t: TestService;
let a: SeededProject;
let b: SeededProject;
let keyA: string;
let cases: IsolationCase[] = [];

beforeAll(async () => {
  t = await startTestService();
  ({ a, b } = await seedTwoProjects(t));
  ({ key: keyA } = await newUser(t, {
    projectId: a.projectId,
    scopes: ['query:read'],
    scopedProjectIds: [a.projectId],
  }));
  cases = isolationCases(a, b, t.config.clickhouseDatabase);
}, 120_000);
afterAll(async () => t?.close());

const run = (query: string, values?: Record<string, unknown>, projectId = a.projectId) =>
  t.api(
    'POST',
    `/api/projects/${projectId}/query/`,
    { query: { kind: 'HogQLQuery', query, ...(values ? { values } : {}) } },
    keyA,
  );

/** B's values that no query text names, so they may appear nowhere in an answer, errors included. */
const otherWords = () => [b.mark, 'b-only', 'globex'].map((w) => w.toLowerCase());

/** B's ids: some queries name them (echoed in `hogql`, `clickhouse`, an error's detail), so only the rows are searched. */
const otherIds = () => [...b.personUuids, ...b.eventUuids].map((w) => w.toLowerCase());

function assertNothingOfB(c: IsolationCase, res: { status: number; body: any; text: string }) {
  const text = res.text.toLowerCase();
  for (const w of otherWords())
    expect(text, `${c.name}: B's "${w}" in the answer`).not.toContain(w);
  if (res.status !== 200) return;
  const rows = JSON.stringify(res.body.results).toLowerCase();
  for (const id of otherIds())
    expect(rows, `${c.name}: B's id ${id} in the rows`).not.toContain(id);
  // the Postgres read models are reached from ClickHouse: never with the password in sight
  const password = new URL(t.config.databaseUrl!).password;
  if (password.length >= 4) expect(res.text).not.toContain(password);
}

function assertOwnRows(c: IsolationCase, res: { body: any }) {
  const rows = JSON.stringify(res.body.results);
  const ownIds = [...a.personUuids, ...a.eventUuids];
  expect(
    rows.includes(a.mark) || ownIds.some((id) => rows.includes(id)),
    `${c.name}: A's own rows are missing: ${rows.slice(0, 300)}`,
  ).toBe(true);
}

describe('POST query/ reads only the project of the URL', () => {
  it('sends every case and never sees B', async () => {
    expect(cases.length).toBeGreaterThan(80);
    const failures: string[] = [];
    for (const c of cases) {
      const res = await run(c.query, c.values);
      try {
        expect(res.status, `${c.name}: a 5xx`).toBeLessThan(500);
        assertNothingOfB(c, res);
        const refusable = c.expect === 'refusedOrNone' || c.expect === 'countOrRefused';
        if (refusable && res.status === 400) {
          expectError(res, 400, { type: 'validation_error' });
          continue;
        }
        expect(res.status, `${c.name}: ${res.text.slice(0, 300)}`).toBe(200);
        if (c.expect === 'own') assertOwnRows(c, res);
        if (c.expect === 'count' || c.expect === 'countOrRefused')
          expect(res.body.results, c.name).toEqual([[c.count]]);
      } catch (e) {
        failures.push(`${c.name} — ${c.query}\n    ${(e as Error).message.split('\n')[0]}`);
      }
    }
    // all cases run before failing, so one run lists every leak and every refusal
    expect(failures, failures.join('\n')).toEqual([]);
  }, 240_000);

  it("refuses project B's URL to a key scoped to A", async () => {
    const res = await run('SELECT count() FROM events', undefined, b.projectId);
    expect([403, 404], res.text).toContain(res.status);
    expect(res.text.toLowerCase()).not.toContain(b.mark.toLowerCase());
  });

  it("answers B's own rows to B's URL (the seed is there, so the cases above can fail)", async () => {
    const ask = (query: string) =>
      t.api('POST', `/api/projects/${b.projectId}/query/`, {
        query: { kind: 'HogQLQuery', query },
      });
    const counted = await ask('SELECT count() FROM events');
    expect(counted.status, counted.text).toBe(200);
    expect(counted.body.results).toEqual([[b.counts.events]]);
    const marks = await ask('SELECT DISTINCT properties.mark FROM events');
    expect(marks.body.results).toEqual([[b.mark]]);
  });
});
