import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';

// Retention (issue #10) over a crafted history of $pageview, clock 2024-04-10 12:00 UTC.
// "ra" is identified as "r1" (one person); r4's first visit is 2024-03-31 23:59:59, the second
// before April. Tables below are counted by hand: cohort c, value j = back j days later.
const NOW = new Date('2024-04-10T12:00:00Z');
let t: TestService;
const pv = (distinctId: string, timestamp: string) => ({
  event: '$pageview',
  distinct_id: distinctId,
  timestamp,
});

beforeAll(async () => {
  t = await startTestService({}, { now: () => NOW });
  const target = { url: t.url, projectApiKey: t.projectApiKey };
  await capture(target, [pv('ra', '2024-04-01T10:00:00Z')]);
  await capture(target, [
    {
      event: '$identify',
      distinct_id: 'r1',
      timestamp: '2024-04-01T11:00:00Z',
      properties: { $anon_distinct_id: 'ra', $set: { email: 'r1@example.com' } },
    },
  ]);
  await capture(target, [
    pv('r1', '2024-04-02T10:00:00Z'),
    pv('r1', '2024-04-04T23:59:59Z'),
    pv('r2', '2024-04-01T09:00:00Z'),
    pv('r2', '2024-04-03T09:00:00Z'),
    pv('r3', '2024-04-02T00:00:00Z'),
    pv('r3', '2024-04-03T12:00:00Z'),
    pv('r4', '2024-03-31T23:59:59Z'),
    pv('r4', '2024-04-02T10:00:00Z'),
  ]);
}, 120_000);
afterAll(async () => t?.close());

const table = async (query: string) => {
  const res = await t.api('GET', `/api/projects/${t.projectId}/insights/retention/?${query}`);
  expect(res.status, res.text).toBe(200);
  return res.body.result as { values: { count: number }[]; label: string; date: string }[];
};
const counts = (rows: Awaited<ReturnType<typeof table>>) =>
  rows.map((r) => r.values.map((v) => v.count));
const persons = async (query: string) => {
  const res = await t.api('GET', `/api/projects/${t.projectId}/persons/retention/?${query}`);
  expect(res.status, res.text).toBe(200);
  return (res.body.results[0].people as { name: string }[]).map((p) => p.name).sort();
};

describe('insights/retention', () => {
  it('recurring: each day’s visitors and who came back, a merged person once', async () => {
    const rows = await table('total_intervals=4&date_to=2024-04-04');
    expect(rows.map((r) => [r.label, r.date])).toEqual([
      ['Day 0', '2024-04-01T00:00:00Z'],
      ['Day 1', '2024-04-02T00:00:00Z'],
      ['Day 2', '2024-04-03T00:00:00Z'],
      ['Day 3', '2024-04-04T00:00:00Z'],
    ]);
    expect(counts(rows)).toEqual([[2, 1, 1, 1], [3, 1, 1], [2, 0], [1]]);
  });

  it('takes a relative date_to (whole days)', async () => {
    expect(counts(await table('total_intervals=4&date_to=-6d'))).toEqual([
      [2, 1, 1, 1],
      [3, 1, 1],
      [2, 0],
      [1],
    ]);
  });

  it('first time: only the day of a person’s first visit ever', async () => {
    const rows = await table(
      'total_intervals=4&date_to=2024-04-04&retention_type=retention_first_time',
    );
    expect(counts(rows)).toEqual([[2, 1, 1, 1], [1, 1, 0], [0, 0], [0]]);
  });

  it('months split at the UTC boundary', async () => {
    const rows = await table('period=Month&total_intervals=2&date_to=2024-04-04');
    expect(rows.map((r) => r.date)).toEqual(['2024-03-01T00:00:00Z', '2024-04-01T00:00:00Z']);
    expect(counts(rows)).toEqual([[1, 1], [4]]);
  });
});

describe('persons/retention', () => {
  const range = 'total_intervals=4&date_to=2024-04-04';
  it('lists a cohort and one of its cells', async () => {
    expect(await persons(`${range}&selected_interval=1`)).toEqual(['r1@example.com', 'r3', 'r4']);
    expect(await persons(`${range}&selected_interval=1&returning_interval=1`)).toEqual(['r3']);
    expect(await persons(`${range}&selected_interval=0&returning_interval=3`)).toEqual([
      'r1@example.com',
    ]);
  });

  it('refuses a cohort past the table', async () => {
    const res = await t.api(
      'GET',
      `/api/projects/${t.projectId}/persons/retention/?${range}&selected_interval=4`,
    );
    expect(res.status).toBe(400);
    expect(res.body.attr).toBe('selected_interval');
  });
});
