import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';

// Funnel correlation (issue #10): funnel $pageview → purchased, clock 2024-06-10 12:00 UTC.
// Converted: c1, c2, c5 (c5 browsed as "ca" before $identify); dropped off: c3, c4. Odds ratios
// are PostHog's with a prior of 1, computed by hand below.
const NOW = new Date('2024-06-10T12:00:00Z');
let t: TestService;
const ev = (event: string, distinctId: string, timestamp: string, properties = {}) => ({
  event,
  distinct_id: distinctId,
  timestamp,
  properties,
});
const FUNNEL = `events=${encodeURIComponent(JSON.stringify([{ id: '$pageview' }, { id: 'purchased' }]))}&date_from=2024-06-01&date_to=2024-06-09`;
const NO_IDENTIFY = `funnel_correlation_exclude_event_names=${encodeURIComponent('["$identify"]')}`;

beforeAll(async () => {
  t = await startTestService({}, { now: () => NOW });
  const target = { url: t.url, projectApiKey: t.projectApiKey };
  const plan = (p: string) => ({ $set: { plan: p } });
  await capture(target, [
    ev('$pageview', 'c1', '2024-06-01T10:00:00Z', plan('pro')),
    ev('viewed_pricing', 'c1', '2024-06-01T10:10:00Z'),
    ev('purchased', 'c1', '2024-06-01T11:00:00Z'),
    ev('$pageview', 'c2', '2024-06-02T10:00:00Z', plan('pro')),
    ev('viewed_pricing', 'c2', '2024-06-02T10:10:00Z'),
    ev('purchased', 'c2', '2024-06-02T11:00:00Z'),
    ev('$pageview', 'c3', '2024-06-03T10:00:00Z', plan('free')),
    ev('read_blog', 'c3', '2024-06-03T10:10:00Z'),
    ev('$pageview', 'c4', '2024-06-04T10:00:00Z', plan('free')),
    ev('read_blog', 'c4', '2024-06-04T10:10:00Z'),
    ev('viewed_pricing', 'c4', '2024-06-04T10:20:00Z'),
    ev('$pageview', 'ca', '2024-06-05T10:00:00Z'),
  ]);
  await capture(target, [
    ev('$identify', 'c5', '2024-06-05T10:01:00Z', {
      $anon_distinct_id: 'ca',
      $set: { plan: 'pro', email: 'c5@example.com' },
    }),
  ]);
  await capture(target, [ev('purchased', 'c5', '2024-06-05T11:00:00Z')]);
}, 120_000);
afterAll(async () => t?.close());

type Row = {
  event: { event: string };
  success_count: number;
  failure_count: number;
  odds_ratio: number;
  correlation_type: string;
};
const correlate = async (query: string) => {
  const res = await t.api(
    'GET',
    `/api/projects/${t.projectId}/insights/funnel/correlation/?${FUNNEL}&${query}`,
  );
  expect(res.status, res.text).toBe(200);
  return res.body.result as { events: Row[]; skewed: boolean };
};
const persons = async (query: string) => {
  const res = await t.api(
    'GET',
    `/api/projects/${t.projectId}/persons/funnel/correlation/?${FUNNEL}&${query}`,
  );
  expect(res.status, res.text).toBe(200);
  return (res.body.results[0].people as { name: string }[]).map((p) => p.name).sort();
};
const summary = (rows: Row[]) =>
  rows
    .map((r) => [r.event.event, r.success_count, r.failure_count, r.correlation_type, r.odds_ratio])
    .sort((a, b) => String(a[0]).localeCompare(String(b[0])));

describe('insights/funnel/correlation', () => {
  it('correlates the other events with converting', async () => {
    const result = await correlate(NO_IDENTIFY);
    expect(result.skewed).toBe(false); // 3 of 5 converted
    expect(result.events.map((r) => r.event.event)).toEqual(['read_blog', 'viewed_pricing']);
    // viewed_pricing: (3/2)/(2/2) = 1.5; read_blog: (1/4)/(3/1) = 1/12
    expect(summary(result.events)).toEqual([
      ['read_blog', 0, 2, 'failure', 1 / 12],
      ['viewed_pricing', 2, 1, 'success', 1.5],
    ]);
  });

  it('correlates person property values', async () => {
    const result = await correlate(
      `funnel_correlation_type=properties&funnel_correlation_names=${encodeURIComponent('["plan"]')}`,
    );
    // pro: c1, c2 and the merged c5 converted: (4/1)/(1/3) = 12; free: (1/4)/(3/1) = 1/12
    expect(summary(result.events)).toEqual([
      ['plan::free', 0, 2, 'failure', 1 / 12],
      ['plan::pro', 3, 0, 'success', 12],
    ]);
  });
});

describe('persons/funnel/correlation', () => {
  const entity = (id: string) =>
    `funnel_correlation_person_entity=${encodeURIComponent(JSON.stringify({ id, type: 'events' }))}`;
  it('lists the converted or dropped-off persons who did an event', async () => {
    expect(await persons(entity('viewed_pricing'))).toEqual(['c1', 'c2']);
    expect(
      await persons(`${entity('viewed_pricing')}&funnel_correlation_person_converted=false`),
    ).toEqual(['c4']);
    expect(
      await persons(`${entity('read_blog')}&funnel_correlation_person_converted=false`),
    ).toEqual(['c3', 'c4']);
  });

  it('lists the persons with a property value', async () => {
    const values = encodeURIComponent(
      JSON.stringify([{ key: 'plan', value: 'pro', type: 'person' }]),
    );
    expect(await persons(`funnel_correlation_property_values=${values}`)).toEqual([
      'c1',
      'c2',
      'c5@example.com',
    ]);
  });
});
