import { afterEach, describe, expect, it } from 'vitest';
import type { PersonRef } from '../../../queries/personTimeTravel/personAsOf.ts';
import {
  propertiesTimeline,
  TimelineFold,
} from '../../../queries/personTimeTravel/propertiesTimeline.ts';
import {
  isoformatUs,
  parseTimelineQuery,
  type RawTimelineQuery,
  TimelineParamError,
  type TimelineParams,
} from '../../../queries/personTimeTravel/timelineParams.ts';
import { captured, identify, log, sliceDeps } from '../../support/personLog.ts';

const NOW = Date.parse('2020-01-09T21:37:00Z');
const bar = JSON.stringify([{ key: 'bar', value: 'xyz', type: 'person' }]);
const pageviews = JSON.stringify([{ id: '$pageview' }]);
const range = (q: RawTimelineQuery) => {
  const p = parseTimelineQuery(q, NOW);
  return [isoformatUs(p.fromUs), isoformatUs(p.toUs)];
};

describe('properties_timeline parameters (PostHog conventions)', () => {
  it('dates: whole days, end of day to the microsecond, relative from now, default -7d to the end of today', () => {
    expect(range({ date_from: '2020-01-01', date_to: '2020-01-05' })).toEqual([
      '2020-01-01T00:00:00+00:00',
      '2020-01-05T23:59:59.999999+00:00',
    ]);
    expect(range({ date_from: '-7d' })).toEqual([
      '2020-01-02T00:00:00+00:00',
      '2020-01-09T23:59:59.999999+00:00',
    ]);
    expect(range({})).toEqual(['2020-01-02T00:00:00+00:00', '2020-01-09T23:59:59.999999+00:00']);
    expect(
      range({ date_from: '2020-01-01T06:30:00Z', date_to: '2020-01-02T07:00:00.250Z' }),
    ).toEqual(['2020-01-01T06:30:00+00:00', '2020-01-02T07:00:00.250000+00:00']);
  });

  it('date_from == date_to (persons modal) means one interval from date_from', () => {
    const same = (d: string, interval?: string) =>
      range({ date_from: d, date_to: d, ...(interval ? { interval } : {}) });
    expect(same('2020-01-02T00:00:00Z')).toEqual([
      '2020-01-02T00:00:00+00:00',
      '2020-01-02T23:59:59.999999+00:00',
    ]);
    expect(same('2020-01-02T00:00:00Z', 'hour')).toEqual([
      '2020-01-02T00:00:00+00:00',
      '2020-01-02T01:00:00+00:00',
    ]);
    expect(same('2020-01-01', 'month')).toEqual([
      '2020-01-01T00:00:00+00:00',
      '2020-01-31T23:59:59.999999+00:00',
    ]);
    expect(same('2020-01-01', 'week')).toEqual([
      '2020-01-01T00:00:00+00:00',
      '2020-01-07T23:59:59.999999+00:00',
    ]);
  });

  it('crucial keys: sorted, unique person keys from properties (groups too), series properties and a person breakdown', () => {
    const p = parseTimelineQuery(
      {
        properties: JSON.stringify({
          type: 'AND',
          values: [
            {
              type: 'OR',
              values: [
                { key: 'zeta', type: 'person' },
                { key: 'ev', type: 'event' },
              ],
            },
            { key: 'alpha', type: 'person' },
          ],
        }),
        events: JSON.stringify([
          {
            id: '$pageview',
            properties: [
              { key: 'mid', type: 'person' },
              { key: 'alpha', type: 'person' },
            ],
          },
          { id: 'signup' },
        ]),
        breakdown: 'plan',
        breakdown_type: 'person',
      },
      NOW,
    );
    expect(p.crucialKeys).toEqual(['alpha', 'mid', 'plan', 'zeta']);
    expect(p.eventNames).toEqual(['$pageview', 'signup']);
    expect(
      parseTimelineQuery({ breakdown: 'plan', breakdown_type: 'event' }, NOW).crucialKeys,
    ).toEqual([]);
    expect(
      parseTimelineQuery({ events: JSON.stringify([{ id: null }]) }, NOW).eventNames,
    ).toBeNull();
    expect(parseTimelineQuery({ events: '[]' }, NOW).eventNames).toBeNull();
  });

  it('refuses what it cannot answer, naming the parameter', () => {
    const attr = (q: RawTimelineQuery) => {
      try {
        parseTimelineQuery(q, NOW);
        return 'accepted';
      } catch (e) {
        return e instanceof TimelineParamError ? e.attr : 'other';
      }
    };
    expect(attr({ properties: '[{' })).toBe('properties');
    expect(attr({ date_from: 'yesterday-ish' })).toBe('date_from');
    expect(attr({ interval: 'minute' })).toBe('interval');
    expect(attr({ actions: JSON.stringify([{ id: 3 }]) })).toBe('actions');
    expect(attr({ actions: '[]' })).toBe('accepted');
    expect(attr({ aggregation_group_type_index: '0' })).toBe('aggregation_group_type_index');
  });
});

describe('properties_timeline points, from the fold', () => {
  // PostHog's "six events but only two relevant changes" case, with the person changing through $set.
  const events = log(
    captured({
      distinctId: 'p',
      ts: '2019-12-27T00:00:00Z',
      uuid: 'c',
      set: { foo: 'abc', bar: 123 },
    }), // before the range
    captured({ distinctId: 'p', ts: '2020-01-01T00:00:00Z', set: { bar: 456 } }),
    captured({ distinctId: 'p', ts: '2020-01-02T00:00:00Z', event: 'whatever', set: { bar: 123 } }),
    captured({ distinctId: 'p', ts: '2020-01-02T01:00:00Z' }),
    captured({ distinctId: 'other', ts: '2020-01-02T02:00:00Z', set: { bar: 1 } }), // someone else
    captured({ distinctId: 'p', ts: '2020-01-03T01:00:00Z', set: { foo: 'changed' } }), // not crucial
    captured({ distinctId: 'p', ts: '2020-01-04T19:00:00Z' }),
    captured({ distinctId: 'p', ts: '2020-01-04T19:00:01.500Z', set: { bar: 789 } }),
    captured({ distinctId: 'p', ts: '2020-01-06T00:00:00Z', set: { bar: 0 } }), // after the range
  );
  const wholeLog = (params: TimelineParams, ref: PersonRef, evs: ReturnType<typeof log>) => {
    const fold = new TimelineFold(1, params);
    for (const e of evs) fold.apply(e);
    return fold.result(ref)?.timeline ?? null;
  };
  const asked: [TimelineParams, PersonRef, ReturnType<typeof log>][] = [];
  /** The fold over the whole log (the reference); every answer is also checked on the person's slice below. */
  const timeline = (
    q: RawTimelineQuery,
    ref: PersonRef = { kind: 'distinct_id', distinctId: 'p' },
    evs = events,
  ) => {
    const params = parseTimelineQuery(
      { date_from: '2020-01-01', date_to: '2020-01-05', ...q },
      NOW,
    );
    asked.push([params, ref, evs]);
    return wholeLog(params, ref, evs);
  };
  afterEach(async () => {
    for (const [params, ref, evs] of asked.splice(0))
      expect(
        await propertiesTimeline(sliceDeps(evs), 1, ref, params),
        `timeline of ${JSON.stringify(ref)} from its slice of the log`,
      ).toEqual(wholeLog(params, ref, evs));
  });
  const abc = (barValue: number, foo = 'abc') => ({ foo, bar: barValue, $creator_event_uuid: 'c' });

  it('a point per run of equal crucial values, with the snapshot of its first event and the run length', () => {
    expect(timeline({ events: pageviews, properties: bar })).toEqual({
      points: [
        { timestamp: '2020-01-01T00:00:00Z', properties: abc(456), relevant_event_count: 1 },
        { timestamp: '2020-01-02T01:00:00Z', properties: abc(123), relevant_event_count: 3 },
        {
          timestamp: '2020-01-04T19:00:01.500Z',
          properties: abc(789, 'changed'),
          relevant_event_count: 1,
        },
      ],
      crucial_property_keys: ['bar'],
      effective_date_from: '2020-01-01T00:00:00+00:00',
      effective_date_to: '2020-01-05T23:59:59.999999+00:00',
    });
  });

  it('without events every event counts; without crucial keys there is one point', () => {
    expect(
      timeline({ properties: bar })!.points.map((p) => [p.timestamp, p.relevant_event_count]),
    ).toEqual([
      ['2020-01-01T00:00:00Z', 1],
      ['2020-01-02T00:00:00Z', 4],
      ['2020-01-04T19:00:01.500Z', 1],
    ]);
    expect(timeline({ events: pageviews })!.points).toEqual([
      { timestamp: '2020-01-01T00:00:00Z', properties: abc(456), relevant_event_count: 5 },
    ]);
  });

  it('returning to an earlier value starts a new point; events are ordered by time, not arrival', () => {
    const evs = log(
      captured({
        distinctId: 'p',
        ts: '2020-01-02T00:00:00Z',
        uuid: 'c',
        set: { foo: 'abc', bar: 456 },
      }),
      captured({ distinctId: 'p', ts: '2020-01-02T14:00:00Z', set: { bar: 456 } }),
      captured({
        distinctId: 'p',
        ts: '2020-01-02T07:00:00Z',
        set: { bar: 123 },
        receivedAt: '2020-01-03T00:00:00Z',
      }),
    );
    // The late event (stamped 07:00) was processed last: its snapshot has bar=123, and it sorts in the middle.
    expect(
      timeline({ properties: bar, date_from: '2020-01-02', date_to: '2020-01-02' }, undefined, evs)!
        .points,
    ).toEqual([
      { timestamp: '2020-01-02T00:00:00Z', properties: abc(456), relevant_event_count: 1 },
      { timestamp: '2020-01-02T07:00:00Z', properties: abc(123), relevant_event_count: 1 },
      { timestamp: '2020-01-02T14:00:00Z', properties: abc(456), relevant_event_count: 1 },
    ]);
  });

  it('the person is the live one: by id or uuid, over the events of all its distinct ids; nobody → null; none in range → no points', () => {
    const evs = log(
      captured({ distinctId: 'anon', ts: '2020-01-01T01:00:00Z', uuid: 'c', set: { bar: 1 } }),
      captured({ distinctId: 'user', ts: '2020-01-01T02:00:00Z', uuid: 'u', set: { bar: 2 } }),
      identify('user', 'anon', '2020-01-01T03:00:00Z'),
      captured({ distinctId: 'anon', ts: '2020-01-01T04:00:00Z', set: { bar: 3 } }),
    );
    const t = timeline({ properties: bar }, { kind: 'id', id: 2 }, evs)!;
    expect(t.points.map((p) => [p.timestamp, p.properties.bar, p.relevant_event_count])).toEqual([
      ['2020-01-01T01:00:00Z', 1, 1], // anon's own person then
      ['2020-01-01T02:00:00Z', 2, 2], // user, and the merge keeps user's value
      ['2020-01-01T04:00:00Z', 3, 1],
    ]);
    expect(timeline({}, { kind: 'id', id: 1 }, evs)).toBeNull(); // merged away
    expect(
      timeline({ date_from: '2021-01-01', date_to: '2021-01-02' }, { kind: 'id', id: 2 }, evs)!
        .points,
    ).toEqual([]);
  });
});
