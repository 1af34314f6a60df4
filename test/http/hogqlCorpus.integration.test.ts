import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aggregates } from '../fixtures/hogqlCorpus/aggregates.ts';
import { arrays } from '../fixtures/hogqlCorpus/arrays.ts';
import { basics } from '../fixtures/hogqlCorpus/basics.ts';
import { dates } from '../fixtures/hogqlCorpus/dates.ts';
import { docs } from '../fixtures/hogqlCorpus/docs.ts';
import { joins } from '../fixtures/hogqlCorpus/joins.ts';
import type { CorpusCase, QueryBody } from '../fixtures/hogqlCorpus/model.ts';
import { refusedCases } from '../fixtures/hogqlCorpus/refused.ts';
import { EVENTS_B } from '../fixtures/hogqlCorpus/seed.ts';
import { type SeededCorpus, seedCorpus } from '../fixtures/hogqlCorpus/seedThroughApi.ts';
import { strings } from '../fixtures/hogqlCorpus/strings.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { expectError } from './helpers.ts';

/**
 * Issue #29's corpus: HogQL queries through `POST /api/projects/:id/query/` on a seeded project,
 * each with its result written from the seed (test/fixtures/hogqlCorpus/, README there), beside a
 * second project with the same distinct ids that no query may see.
 */
let t: TestService;
let seeded: SeededCorpus;

beforeAll(async () => {
  t = await startTestService();
  seeded = await seedCorpus(t);
}, 120_000);
afterAll(async () => t?.close());

const run = (projectId: number, query: string, values?: Record<string, unknown>) =>
  t.api('POST', `/api/projects/${projectId}/query/`, {
    query: { kind: 'HogQLQuery', query, ...(values ? { values } : {}) },
  });

/** Rows compared regardless of order, for queries whose ORDER BY leaves ties (or has none). */
const sorted = (rows: unknown[][]) =>
  rows.map((r) => JSON.stringify(r)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

const corpus: Record<string, CorpusCase[]> = {
  basics,
  strings,
  dates,
  aggregates,
  joins,
  'arrays, windows, placeholders': arrays,
  'PostHog documentation examples': docs,
  refused: refusedCases,
};

it('holds at least 150 queries', () => {
  expect(Object.values(corpus).flat().length).toBeGreaterThanOrEqual(150);
});

it('seeded project B, which no corpus query sees', async () => {
  const res = await run(seeded.projectB, 'SELECT count() FROM events');
  expect(res.status, res.text).toBe(200);
  expect(res.body.results).toEqual([[EVENTS_B.length]]);
});

for (const [theme, cases] of Object.entries(corpus)) {
  describe(theme, () => {
    it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
      const values = typeof c.values === 'function' ? c.values(seeded) : c.values;
      const res = await run(seeded.projectA, c.query, values);
      if (c.status === 400) {
        expectError(res, 400, { type: 'validation_error' });
        return;
      }
      expect(res.status, res.text).toBe(200);
      const body = res.body as QueryBody;
      if (c.rows) {
        if (c.unordered) expect(sorted(body.results)).toEqual(sorted(c.rows));
        else expect(body.results).toEqual(c.rows);
      }
      if (c.columns) expect(body.columns).toEqual(c.columns);
      c.check?.(body);
    });
  });
}
