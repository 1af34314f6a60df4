import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHogQL } from '../../../projections/hogql/index.ts';
import { type ClickHouse, openClickHouse } from '../../../src/runtime/clickhouse.ts';
import { startTestService, type TestService } from '../../support/testService.ts';
import { type SeededProject, seedTwoProjects } from '../../support/twoProjects.ts';

let t: TestService;
let ch: ClickHouse;
let a: SeededProject;
let b: SeededProject;

beforeAll(async () => {
  t = await startTestService();
  ({ a, b } = await seedTwoProjects(t));
  // the service's own chDB session (one per process), on its database
  ch = await openClickHouse(undefined, t.config.chdbPath, t.config.clickhouseDatabase);
}, 120_000);
afterAll(async () => {
  await ch?.close();
  await t?.close();
});

const run = (query: string, extra: Record<string, unknown> = {}, project = a) =>
  runHogQL({ ch, pool: t.service.stores.pool }, { projectId: project.projectId, query, ...extra });

describe('runHogQL on seeded projects', () => {
  it('counts the project’s own events, names columns and types as PostHog', async () => {
    const r = await run('select count() as c, uniq(distinct_id) from events');
    expect(r.results).toEqual([[a.counts.events, 5]]);
    expect(r.columns).toEqual(['c', 'uniq(distinct_id)']);
    expect(r.types).toEqual([
      ['c', 'UInt64'],
      ['uniq(distinct_id)', 'UInt64'],
    ]);
    expect(r.hasMore).toBe(false);
    expect(r.limit).toBe(100);
    expect((await run('select count() from events', {}, b)).results).toEqual([[b.counts.events]]);
  });
});
