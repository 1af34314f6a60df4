import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';

// Paths (issue #10) over crafted pageviews, clock 2024-05-10 12:00 UTC. "qa" is identified as
// "q1": its /home and q1's later pages are one path. q4's /home is a second before the range.
const NOW = new Date('2024-05-10T12:00:00Z');
let t: TestService;
const pv = (distinctId: string, timestamp: string, url: string) => ({
  event: '$pageview',
  distinct_id: distinctId,
  timestamp,
  properties: { $current_url: url },
});
const RANGE = 'date_from=2024-05-01&date_to=2024-05-09';

beforeAll(async () => {
  t = await startTestService({}, { now: () => NOW });
  const target = { url: t.url, projectApiKey: t.projectApiKey };
  await capture(target, [pv('qa', '2024-05-01T10:00:00Z', '/home')]);
  await capture(target, [
    {
      event: '$identify',
      distinct_id: 'q1',
      timestamp: '2024-05-01T10:01:00Z',
      properties: { $anon_distinct_id: 'qa', $set: { email: 'q1@example.com' } },
    },
  ]);
  await capture(target, [
    pv('q1', '2024-05-01T10:02:00Z', '/pricing'),
    pv('q1', '2024-05-01T10:03:00Z', '/pricing'),
    pv('q1', '2024-05-01T10:05:00Z', '/signup'),
    pv('q2', '2024-05-02T10:00:00Z', '/home'),
    pv('q2', '2024-05-02T10:01:00Z', '/pricing'),
    pv('q3', '2024-05-03T10:00:00Z', '/blog'),
    pv('q3', '2024-05-03T10:01:00Z', '/home'),
    pv('q3', '2024-05-03T10:02:00Z', '/pricing'),
    pv('q3', '2024-05-03T10:03:00Z', '/signup'),
    pv('q4', '2024-04-30T23:59:59Z', '/home'),
    pv('q4', '2024-05-01T00:00:00Z', '/docs'),
  ]);
}, 120_000);
afterAll(async () => t?.close());

const edges = async (query: string) => {
  const res = await t.api('GET', `/api/projects/${t.projectId}/insights/path/?${query}`);
  expect(res.status, res.text).toBe(200);
  return (res.body.result as { source: string; target: string; value: number }[]).map((e) => [
    e.source,
    e.target,
    e.value,
  ]);
};
const persons = async (query: string) => {
  const res = await t.api('GET', `/api/projects/${t.projectId}/persons/path/?${query}`);
  expect(res.status, res.text).toBe(200);
  return (res.body.results[0].people as { name: string }[]).map((p) => p.name).sort();
};

describe('insights/path', () => {
  it('counts persons per edge, repeats collapsed, a merged person’s pages as one path', async () => {
    expect(await edges(RANGE)).toEqual([
      ['1_/home', '2_/pricing', 2],
      ['1_/blog', '2_/home', 1],
      ['2_/home', '3_/pricing', 1],
      ['2_/pricing', '3_/signup', 1],
      ['3_/pricing', '4_/signup', 1],
    ]);
  });

  it('starts at start_point and ends at end_point', async () => {
    expect(await edges(`${RANGE}&start_point=/home`)).toEqual([
      ['1_/home', '2_/pricing', 3],
      ['2_/pricing', '3_/signup', 2],
    ]);
    expect(await edges(`${RANGE}&end_point=/pricing`)).toEqual([
      ['1_/home', '2_/pricing', 2],
      ['1_/blog', '2_/home', 1],
      ['2_/home', '3_/pricing', 1],
    ]);
  });
});

describe('persons/path', () => {
  it('lists who took an edge and who dropped off after an item', async () => {
    expect(await persons(`${RANGE}&path_start_key=1_/home&path_end_key=2_/pricing`)).toEqual([
      'q1@example.com',
      'q2',
    ]);
    expect(await persons(`${RANGE}&path_dropoff_key=2_/pricing`)).toEqual(['q2']);
    expect(
      await persons(`${RANGE}&start_point=/home&path_start_key=2_/pricing&path_end_key=3_/signup`),
    ).toEqual(['q1@example.com', 'q3']);
  });

  it('refuses a malformed step key', async () => {
    const res = await t.api(
      'GET',
      `/api/projects/${t.projectId}/persons/path/?${RANGE}&path_start_key=home`,
    );
    expect(res.status).toBe(400);
    expect(res.body.attr).toBe('path_start_key');
  });
});
