import { describe, expect, it } from 'vitest';
import {
  buckets,
  chartRange,
  dayOf,
  labelOf,
  pointRange,
} from '../../../queries/insights/insightDates.ts';

// Saturday 2024-03-02 15:30 UTC (2024 is a leap year); weeks start on Sunday.
const NOW = new Date('2024-03-02T15:30:00Z');
const iso = (r: { from: Date; to: Date }) => [r.from.toISOString(), r.to.toISOString()];

describe('insight date ranges (UTC)', () => {
  it('aligns relative starts to their interval; date_to defaults to now, inclusive', () => {
    const end = '2024-03-02T15:30:00.001Z';
    expect(iso(chartRange({ date_from: '-24h' }, 'hour', NOW))).toEqual([
      '2024-03-01T15:00:00.000Z',
      end,
    ]);
    expect(iso(chartRange({ date_from: '-7d' }, 'day', NOW))).toEqual([
      '2024-02-24T00:00:00.000Z',
      end,
    ]);
    expect(iso(chartRange({}, 'day', NOW))).toEqual(['2024-02-24T00:00:00.000Z', end]);
    // -2w is Saturday 2024-02-17, whose week began on Sunday 2024-02-11
    expect(iso(chartRange({ date_from: '-2w' }, 'week', NOW))).toEqual([
      '2024-02-11T00:00:00.000Z',
      end,
    ]);
    expect(iso(chartRange({ date_from: '-1m' }, 'month', NOW))).toEqual([
      '2024-02-01T00:00:00.000Z',
      end,
    ]);
    expect(iso(chartRange({ date_from: '-1y' }, 'day', NOW))).toEqual([
      '2023-03-02T00:00:00.000Z',
      end,
    ]);
    expect(iso(chartRange({ date_from: 'dStart' }, 'hour', NOW))).toEqual([
      '2024-03-02T00:00:00.000Z',
      end,
    ]);
    expect(iso(chartRange({ date_from: 'mStart' }, 'day', NOW))).toEqual([
      '2024-03-01T00:00:00.000Z',
      end,
    ]);
    expect(iso(chartRange({ date_from: 'yStart' }, 'month', NOW))).toEqual([
      '2024-01-01T00:00:00.000Z',
      end,
    ]);
  });

  it('reads a bare date_to as its whole day', () => {
    expect(
      iso(chartRange({ date_from: '2024-01-31', date_to: '2024-02-29' }, 'month', NOW)),
    ).toEqual(['2024-01-01T00:00:00.000Z', '2024-03-01T00:00:00.000Z']);
  });

  it('buckets weeks from Sunday and months across a leap February', () => {
    const weeks = buckets(
      'week',
      chartRange({ date_from: '2024-02-25', date_to: '2024-03-02' }, 'week', NOW),
    );
    expect(weeks.map((b) => dayOf('week', b))).toEqual(['2024-02-25']);
    const sunday = buckets(
      'week',
      chartRange({ date_from: '2024-02-24', date_to: '2024-02-25' }, 'week', NOW),
    );
    expect(sunday.map((b) => dayOf('week', b))).toEqual(['2024-02-18', '2024-02-25']);
    const months = buckets(
      'month',
      chartRange({ date_from: '2023-12-31T23:59:59Z', date_to: '2024-03-01' }, 'month', NOW),
    );
    expect(months.map((b) => dayOf('month', b))).toEqual([
      '2023-12-01',
      '2024-01-01',
      '2024-02-01',
      '2024-03-01',
    ]);
    expect(labelOf('month', months[2]!)).toBe('1-Feb-2024');
    const hours = buckets('hour', chartRange({ date_from: '-2h' }, 'hour', NOW));
    expect(hours.map((b) => dayOf('hour', b))).toEqual([
      '2024-03-02 13:00:00',
      '2024-03-02 14:00:00',
      '2024-03-02 15:00:00',
    ]);
    expect(labelOf('hour', hours[0]!)).toBe('2-Mar-2024 13:00');
  });

  it('takes the interval holding date_from as one point', () => {
    expect(iso(pointRange({ date_from: '2024-02-29T23:59:59Z' }, 'week', NOW))).toEqual([
      '2024-02-25T00:00:00.000Z',
      '2024-03-03T00:00:00.000Z',
    ]);
    expect(iso(pointRange({ date_from: '2024-02-29T23:59:59Z' }, 'month', NOW))).toEqual([
      '2024-02-01T00:00:00.000Z',
      '2024-03-01T00:00:00.000Z',
    ]);
    expect(iso(pointRange({}, 'day', NOW))).toEqual([
      '2024-03-02T00:00:00.000Z',
      '2024-03-03T00:00:00.000Z',
    ]);
  });

  it('refuses bad dates, reversed ranges and too many intervals (400)', () => {
    for (const [q, interval, attr] of [
      [{ date_from: 'yesterday' }, 'day', 'date_from'],
      [{ date_from: '-7d', date_to: '-8d' }, 'day', 'date_to'],
      [{ date_from: '2020-01-01' }, 'hour', 'interval'],
    ] as const)
      expect(() => chartRange(q, interval, NOW), JSON.stringify(q)).toThrow(
        expect.objectContaining({ error: expect.objectContaining({ kind: 'validation', attr }) }),
      );
  });
});
