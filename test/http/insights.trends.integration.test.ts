import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';

// Person analytics (issue #10): trends, stickiness and lifecycle with their actors, over a crafted
// history captured through /batch/. The clock is Monday 2024-02-05 12:00 UTC; weeks start on
// Sunday. "anon-a" is merged into "alice" by $identify: one person. Expectations are counted by
// hand from the history below, not by the code under test.
const NOW = new Date('2024-02-05T12:00:00Z');
let t: TestService;
const base = () => `/api/projects/${t.projectId}`;
const pageview = (distinctId: string, timestamp: string, browser: string, more = {}) => ({
  event: '$pageview',
  distinct_id: distinctId,
  timestamp,
  properties: { $browser: browser, ...more },
});
const PV = encodeURIComponent(JSON.stringify([{ id: '$pageview', type: 'events' }]));
const PV_DAU = encodeURIComponent(JSON.stringify([{ id: '$pageview', math: 'dau' }]));

beforeAll(async () => {
  t = await startTestService({}, { now: () => NOW });
  const target = { url: t.url, projectApiKey: t.projectApiKey };
  await capture(target, [
    pageview('anon-a', '2024-01-28T10:00:00Z', 'Chrome'),
    pageview('anon-a', '2024-01-29T09:00:00Z', 'Chrome'),
  ]);
  await capture(target, [
    {
      event: '$identify',
      distinct_id: 'alice',
      timestamp: '2024-01-29T10:00:00Z',
      properties: {
        $anon_distinct_id: 'anon-a',
        $set: { email: 'alice@example.com', plan: 'paid' },
      },
    },
  ]);
  await capture(target, [
    pageview('alice', '2024-01-29T11:00:00Z', 'Chrome'),
    pageview('bob', '2024-01-31T23:59:59Z', 'Firefox', { $set: { plan: 'free' } }),
    pageview('bob', '2024-02-01T00:00:00Z', 'Firefox'),
    pageview('carol', '2024-02-01T08:00:00Z', 'Safari'),
    pageview('alice', '2024-02-03T23:30:00Z', 'Chrome'),
    pageview('alice', '2024-02-04T00:30:00Z', 'Chrome'),
    { event: 'signed_up', distinct_id: 'carol', timestamp: '2024-02-05T09:00:00Z' },
  ]);
}, 120_000);
afterAll(async () => t?.close());

const series = async (query: string) => {
  const res = await t.api('GET', `${base()}/insights/trend/?${query}`);
  expect(res.status, res.text).toBe(200);
  return res.body.result as {
    label: string;
    data: number[];
    labels: string[];
    days: (string | number)[];
    count: number;
    breakdown_value?: string;
    status?: string;
  }[];
};
const people = async (path: string) => {
  const res = await t.api('GET', `${base()}/persons/${path}`);
  expect(res.status, res.text).toBe(200);
  return res.body as {
    results: { people: { distinct_ids: string[]; name: string }[]; count: number }[];
    next: string | null;
  };
};
const names = (body: Awaited<ReturnType<typeof people>>) =>
  body.results[0]!.people.map((p) => p.name).sort();

describe('insights/trend (Volume)', () => {
  it('counts events per day from -7d, aligned to the day (relative dates)', async () => {
    const [s] = await series(`events=${PV}&date_from=-7d&interval=day`);
    expect(s!.days).toEqual([
      '2024-01-29',
      '2024-01-30',
      '2024-01-31',
      '2024-02-01',
      '2024-02-02',
      '2024-02-03',
      '2024-02-04',
      '2024-02-05',
    ]);
    expect(s!.data).toEqual([2, 0, 1, 2, 0, 1, 1, 0]);
    expect(s!.count).toBe(7);
  });

  it('starts date_from=all at the project’s first event (anon-a, 2024-01-28 10:00)', async () => {
    const [s] = await series(`events=${PV}&date_from=all&interval=day`);
    expect(s!.days).toEqual([
      '2024-01-28',
      '2024-01-29',
      '2024-01-30',
      '2024-01-31',
      '2024-02-01',
      '2024-02-02',
      '2024-02-03',
      '2024-02-04',
      '2024-02-05',
    ]);
    expect(s!.data).toEqual([1, 2, 0, 1, 2, 0, 1, 1, 0]);
    const [hours] = await series(`events=${PV}&date_from=all&interval=hour`);
    expect(hours!.days[0]).toBe('2024-01-28 10:00:00');
    expect(hours!.days).toHaveLength(195); // 2024-01-28 10:00 … 2024-02-05 12:00
    expect(hours!.count).toBe(8);
  });

  it('counts a merged person once (math dau)', async () => {
    const [s] = await series(`events=${PV_DAU}&date_from=-7d&interval=day`);
    expect(s!.data).toEqual([1, 0, 1, 2, 0, 1, 1, 0]);
  });

  it('breaks down by an event property', async () => {
    const result = await series(`events=${PV}&date_from=-7d&interval=day&breakdown=$browser`);
    expect(result.map((s) => [s.breakdown_value, s.data])).toEqual([
      ['Chrome', [2, 0, 0, 0, 0, 1, 1, 0]],
      ['Firefox', [0, 0, 1, 1, 0, 0, 0, 0]],
      ['Safari', [0, 0, 0, 1, 0, 0, 0, 0]],
    ]);
  });

  it('breaks down by a person property: the person’s value now, after merges', async () => {
    const result = await series(
      `events=${PV}&date_from=-7d&interval=day&breakdown=plan&breakdown_type=person`,
    );
    // anon-a's pageview counts as "paid": anon-a was merged into alice, who is on the paid plan
    expect(result.map((s) => [s.label, s.breakdown_value, s.data])).toEqual([
      ['$pageview - paid', 'paid', [2, 0, 0, 0, 0, 1, 1, 0]],
      ['$pageview - free', 'free', [0, 0, 1, 1, 0, 0, 0, 0]],
      ['$pageview - none', '', [0, 0, 0, 1, 0, 0, 0, 0]],
    ]);
    const [paid] = await series(
      `events=${PV_DAU}&date_from=-7d&interval=day&breakdown=plan&breakdown_type=person`,
    );
    expect(paid!.data).toEqual([1, 0, 0, 0, 0, 1, 1, 0]);
  });

  it('buckets weeks from Sunday and months at the UTC boundary', async () => {
    const [weeks] = await series(`events=${PV}&date_from=-14d&interval=week`);
    expect(weeks!.days).toEqual(['2024-01-21', '2024-01-28', '2024-02-04']);
    expect(weeks!.data).toEqual([0, 7, 1]);
    const [months] = await series(
      `events=${PV_DAU}&date_from=2024-01-01&date_to=2024-02-29&interval=month`,
    );
    expect(months!.days).toEqual(['2024-01-01', '2024-02-01']);
    // January: alice (anon-a merged in) and bob (23:59:59); February: bob (00:00:00), carol, alice
    expect(months!.data).toEqual([2, 3]);
  });
});

describe('persons/trends', () => {
  it('lists the one merged person behind a day, with both distinct ids', async () => {
    const body = await people(`trends/?events=${PV}&date_from=2024-01-29&interval=day`);
    expect(body.results[0]!.count).toBe(1);
    const [alice] = body.results[0]!.people;
    expect(alice!.name).toBe('alice@example.com');
    expect([...alice!.distinct_ids].sort()).toEqual(['alice', 'anon-a']);
    expect(body.next).toBeNull();
  });

  it('restricts to a breakdown value', async () => {
    const body = await people(
      `trends/?events=${PV}&date_from=2024-02-01&interval=day&breakdown=$browser&breakdown_value=Firefox`,
    );
    expect(names(body)).toEqual(['bob']);
  });

  it('restricts to a person breakdown value, empty for persons without the property', async () => {
    const point = `trends/?events=${PV}&date_from=2024-02-01&interval=day&breakdown=plan&breakdown_type=person`;
    expect(names(await people(`${point}&breakdown_value=free`))).toEqual(['bob']);
    expect(names(await people(`${point}&breakdown_value=`))).toEqual(['carol']);
    const paid = await people(
      `trends/?events=${PV}&date_from=2024-01-29&interval=day&breakdown=plan&breakdown_type=person&breakdown_value=paid`,
    );
    expect(names(paid)).toEqual(['alice@example.com']);
    expect(paid.results[0]!.people).toHaveLength(1);
  });

  it('takes a relative date for the point and pages with next', async () => {
    const first = await people(`trends/?events=${PV}&date_from=-4d&interval=day&limit=1`);
    expect(first.results[0]!.count).toBe(1);
    expect(first.next).not.toBeNull();
    const second = await t.api('GET', first.next!.replace(t.url, ''));
    expect(second.status).toBe(200);
    const all = [...first.results[0]!.people, ...second.body.results[0].people].map(
      (p: { name: string }) => p.name,
    );
    expect(all.sort()).toEqual(['bob', 'carol']);
    expect(second.body.next).toBeNull();
  });

  it('exports CSV', async () => {
    const res = await fetch(
      `${t.url}${base()}/persons/trends/?events=${PV}&date_from=2024-02-01&interval=day&format=csv`,
      { headers: { authorization: `Bearer ${t.personalApiKey}` } },
    );
    expect(res.status).toBe(200);
    const lines = (await res.text()).trim().split('\n');
    expect(lines[0]).toMatch(/^id,uuid,name,distinct_ids/);
    expect(
      lines
        .slice(1)
        .map((l) => l.split(',')[2])
        .sort(),
    ).toEqual(['bob', 'carol']);
  });
});

describe('stickiness', () => {
  const range = 'date_from=2024-01-29&date_to=2024-02-04&interval=day';
  it('counts persons by the number of days they were active', async () => {
    const [s] = await series(`events=${PV}&${range}&shown_as=Stickiness`);
    expect(s!.days).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // carol 1 day, bob 2 (Jan 31, Feb 1), alice 3 (Jan 29 as anon-a and alice, Feb 3, Feb 4)
    expect(s!.data).toEqual([1, 1, 1, 0, 0, 0, 0]);
  });

  it('lists the persons active on exactly N days', async () => {
    expect(names(await people(`stickiness/?events=${PV}&${range}&stickiness_days=2`))).toEqual([
      'bob',
    ]);
    expect(names(await people(`stickiness/?events=${PV}&${range}&stickiness_days=3`))).toEqual([
      'alice@example.com',
    ]);
  });
});

describe('lifecycle', () => {
  const range = 'date_from=2024-01-29&date_to=2024-02-04&interval=day';
  it('classifies every person per day', async () => {
    const result = await series(`events=${PV}&${range}&shown_as=Lifecycle`);
    const by = Object.fromEntries(result.map((s) => [s.status, s.data]));
    //          Jan29 Jan30 Jan31 Feb1 Feb2 Feb3 Feb4
    expect(by).toEqual({
      new: [0, 0, 1, 1, 0, 0, 0],
      returning: [1, 0, 0, 1, 0, 0, 1],
      resurrecting: [0, 0, 0, 0, 0, 1, 0],
      dormant: [0, -1, 0, 0, -2, 0, 0],
    });
  });

  it('lists the persons of one status at one day', async () => {
    const dormant = await people(
      `lifecycle/?events=${PV}&${range}&lifecycle_type=dormant&target_date=2024-02-02`,
    );
    expect(names(dormant)).toEqual(['bob', 'carol']);
    const returning = await people(
      `lifecycle/?events=${PV}&${range}&lifecycle_type=returning&target_date=2024-01-29`,
    );
    expect(names(returning)).toEqual(['alice@example.com']);
  });
});

describe('stickiness and lifecycle by week and month (UTC boundaries)', () => {
  // weeks from -14d: Jan 21–27, Jan 28–Feb 3, Feb 4–10; alice (anon-a merged in) is active in
  // the last two, bob (Jan 31 23:59:59, Feb 1 00:00) and carol (Feb 1) in the second only
  const weeks = 'date_from=-14d&interval=week';
  // bob's two pageviews fall in January and in February, one second apart
  const months = 'date_from=2024-01-01&date_to=2024-02-29&interval=month';

  it('counts active weeks and months per person', async () => {
    const [w] = await series(`events=${PV}&${weeks}&shown_as=Stickiness`);
    expect(w!.days).toEqual([1, 2, 3]);
    expect(w!.data).toEqual([2, 1, 0]);
    expect(w!.labels).toEqual(['1 week', '2 weeks', '3 weeks']);
    const [m] = await series(`events=${PV}&${months}&shown_as=Stickiness`);
    expect(m!.data).toEqual([1, 2]);
    expect(names(await people(`stickiness/?events=${PV}&${weeks}&stickiness_days=2`))).toEqual([
      'alice@example.com',
    ]);
    expect(names(await people(`stickiness/?events=${PV}&${months}&stickiness_days=2`))).toEqual([
      'alice@example.com',
      'bob',
    ]);
  });

  it('classifies persons per week and per month', async () => {
    const byStatus = async (range: string) =>
      Object.fromEntries(
        (await series(`events=${PV}&${range}&shown_as=Lifecycle`)).map((s) => [s.status, s.data]),
      );
    expect(await byStatus(weeks)).toEqual({
      new: [0, 3, 0],
      returning: [0, 0, 1],
      resurrecting: [0, 0, 0],
      dormant: [0, 0, -2],
    });
    expect(await byStatus(months)).toEqual({
      new: [2, 1],
      returning: [0, 2],
      resurrecting: [0, 0],
      dormant: [0, 0],
    });
    const at = (type: string, date: string, range: string) =>
      people(`lifecycle/?events=${PV}&${range}&lifecycle_type=${type}&target_date=${date}`);
    expect(names(await at('dormant', '2024-02-05', weeks))).toEqual(['bob', 'carol']);
    expect(names(await at('new', '2024-01-30', weeks))).toEqual([
      'alice@example.com',
      'bob',
      'carol',
    ]);
    expect(names(await at('returning', '2024-02-29', months))).toEqual([
      'alice@example.com',
      'bob',
    ]);
  });
});

describe('bad input', () => {
  it('answers 400 in the error shape', async () => {
    for (const query of [
      'date_from=-7d',
      `events=${PV}&date_from=yesterday`,
      `events=not-json`,
      `events=${PV}&actions=${encodeURIComponent('[{"id":1}]')}`,
      `events=${PV}&date_from=2020-01-01&interval=hour`,
    ]) {
      const res = await t.api('GET', `${base()}/insights/trend/?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.type, query).toBe('validation_error');
    }
  });
});
