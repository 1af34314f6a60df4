import { describe, expect, it } from 'vitest';
import {
  type NormalizeContext,
  normalizeCapturedEvent,
} from '../../../commands/capture/normalizeCapturedEvent.ts';

const NOW = new Date('2023-01-01T12:00:00.000Z');
const ctx = (over: Partial<NormalizeContext> = {}): NormalizeContext => ({
  projectId: 7,
  now: NOW,
  sentAt: undefined,
  ip: '203.0.113.7',
  path: '/e',
  ...over,
});
const norm = (item: Record<string, unknown>, c = ctx()) => normalizeCapturedEvent(item, c);
const accepted = (item: Record<string, unknown>, c = ctx()) => {
  const r = norm(item, c);
  if (r.kind !== 'accepted') throw new Error(`dropped: ${JSON.stringify(r.warning)}`);
  return r;
};
const data = (item: Record<string, unknown>, c = ctx()) => accepted(item, c).data;
const ev = (extra: Record<string, unknown> = {}) => ({ event: 'e', distinct_id: 'd', ...extra });

describe('normalizeCapturedEvent: the whole record', () => {
  it('fills every field of EventCaptured', () => {
    const r = accepted(
      ev({
        uuid: '0190A0B0-0000-7000-8000-000000000037',
        properties: { a: 1 },
        timestamp: '2023-01-01T11:00:00Z',
      }),
      ctx({ sentAt: '2023-01-01T12:00:10Z' }),
    );
    expect(r).toEqual({
      kind: 'accepted',
      warnings: [],
      data: {
        uuid: '0190a0b0-0000-7000-8000-000000000037',
        projectId: 7,
        event: 'e',
        distinctId: 'd',
        properties: { a: 1, $ip: '203.0.113.7', $sent_at: '2023-01-01T12:00:10.000Z' },
        // PostHog's own example: now 12:00:00, sent_at 12:00:10, timestamp 11:00:00 → 10:59:50
        timestamp: '2023-01-01T10:59:50.000Z',
        sentAt: '2023-01-01T12:00:10.000Z',
        receivedAt: '2023-01-01T12:00:00.000Z',
        ip: '203.0.113.7',
      },
    });
  });

  it('does not change its input', () => {
    const item = ev({ properties: { $set: { a: 1 } }, $set: { b: 2 } });
    const copy = structuredClone(item);
    data(item);
    expect(item).toEqual(copy);
  });
});

describe('normalizeCapturedEvent: event name (decision 1)', () => {
  it('missing or null → dropped with a warning; empty → dropped', () => {
    for (const item of [
      { distinct_id: 'd' },
      { event: null, distinct_id: 'd', uuid: '0190a0b0-0000-7000-8000-000000000037' },
    ]) {
      const r = norm(item);
      expect(r.kind).toBe('dropped');
      expect(r.kind === 'dropped' && r.warning.type).toBe('skipping_event_invalid_event_name');
    }
    expect(
      norm({ event: null, distinct_id: 'd', uuid: '0190a0b0-0000-7000-8000-000000000037' }),
    ).toMatchObject({
      warning: {
        details: { eventUuid: '0190a0b0-0000-7000-8000-000000000037', reason: 'missing' },
      },
    });
    expect(norm(ev({ event: '' }))).toMatchObject({
      kind: 'dropped',
      warning: { details: { reason: 'empty' } },
    });
  });

  it('nameless on /engage (with or without trailing slash) is $identify', () => {
    expect(data({ $distinct_id: 3 }, ctx({ path: '/engage' })).event).toBe('$identify');
    expect(data({ $distinct_id: 3 }, ctx({ path: '/engage/' })).event).toBe('$identify');
    expect(data({ event: 'x', $distinct_id: 3 }, ctx({ path: '/engage' })).event).toBe('x');
  });

  it('non-strings are JSON-stringified; everything is cut to 200 characters without splitting a surrogate pair', () => {
    expect(data(ev({ event: 42 })).event).toBe('42');
    expect(data(ev({ event: { a: [1] } })).event).toBe('{"a":[1]}');
    expect(data(ev({ event: 'x'.repeat(250) })).event).toBe('x'.repeat(200));
    expect(data(ev({ event: '\u{1F913}'.repeat(250) })).event).toBe('\u{1F913}'.repeat(200));
  });
});

describe('normalizeCapturedEvent: distinct id (capture.md §2.3)', () => {
  it('distinct_id, then $distinct_id, then properties.distinct_id; null falls through', () => {
    expect(
      data({ event: 'e', distinct_id: 'a', $distinct_id: 'b', properties: { distinct_id: 'c' } })
        .distinctId,
    ).toBe('a');
    expect(
      data({ event: 'e', $distinct_id: 'b', properties: { distinct_id: 'c' } }).distinctId,
    ).toBe('b');
    expect(
      data({ event: 'e', distinct_id: null, properties: { distinct_id: 'c' } }).distinctId,
    ).toBe('c');
  });

  it.each([
    [23, '23'],
    [23.4, '23.4'],
    [0, '0'],
    [false, 'false'],
    [['a', 'b'], '["a","b"]'],
    [{ x: 1 }, '{"x":1}'],
  ])('%j → %s', (id, expected) => {
    expect(data(ev({ distinct_id: id })).distinctId).toBe(expected);
  });

  it('missing / null / empty → dropped with skipping_event_invalid_distinct_id', () => {
    expect(norm({ event: 'e' })).toMatchObject({
      kind: 'dropped',
      warning: {
        type: 'skipping_event_invalid_distinct_id',
        details: { reason: 'missing', eventName: 'e' },
      },
    });
    expect(norm(ev({ distinct_id: null }))).toMatchObject({
      kind: 'dropped',
      warning: { details: { reason: 'null' } },
    });
    expect(norm(ev({ distinct_id: '' }))).toMatchObject({
      kind: 'dropped',
      warning: { details: { reason: 'empty' } },
    });
  });

  it('NUL becomes U+FFFD; cut to 200 characters', () => {
    expect(data(ev({ distinct_id: 'a\0b' })).distinctId).toBe('a\uFFFDb');
    expect(data(ev({ distinct_id: 'é'.repeat(300) })).distinctId).toBe('é'.repeat(200));
  });
});

describe('normalizeCapturedEvent: uuid', () => {
  it('generates a UUIDv7 of the receive time when the client sent none', () => {
    const { uuid } = data(ev());
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(uuid.replace(/-/g, '').slice(0, 12), 16)).toBe(NOW.getTime());
    expect(data(ev({ uuid: '' })).uuid).not.toBe(data(ev({ uuid: '' })).uuid);
  });
});

describe('normalizeCapturedEvent: properties (§3.1)', () => {
  it('top-level $set / $set_once are merged in, top-level keys winning', () => {
    const d = data(
      ev({
        properties: { $set: { a: 1, b: 1 }, $set_once: 'junk' },
        $set: { b: 2 },
        $set_once: { c: 3 },
      }),
    );
    expect(d.properties.$set).toEqual({ a: 1, b: 2 });
    expect(d.properties.$set_once).toEqual({ c: 3 });
    expect(
      data(ev({ properties: { $set: { a: 1 } }, $set: 'not an object' })).properties.$set,
    ).toEqual({ a: 1 });
    expect(data(ev()).properties).not.toHaveProperty('$set');
  });

  it('$ip from the request only when the client sent none', () => {
    expect(data(ev({ properties: { $ip: '1.2.3.4' } })).properties.$ip).toBe('1.2.3.4');
    expect(data(ev({ properties: { $ip: null } })).properties.$ip).toBeNull();
    expect(data(ev(), ctx({ ip: null })).properties).not.toHaveProperty('$ip');
  });

  it('$elements and $elements_chain pass through untouched', () => {
    const elements = [{ tag_name: 'a' }];
    const d = data(ev({ properties: { $elements: elements, $elements_chain: 'a:nth-child="1"' } }));
    expect(d.properties).toMatchObject({ $elements: elements, $elements_chain: 'a:nth-child="1"' });
    expect(d).not.toHaveProperty('elements');
  });
});

describe('normalizeCapturedEvent: timestamp (§2.5)', () => {
  const ts = (item: Record<string, unknown>, c = ctx()) => accepted(item, c);

  it('no timestamp → now', () => {
    expect(ts(ev()).data.timestamp).toBe('2023-01-01T12:00:00.000Z');
  });

  it('timestamp without sent_at is taken as sent', () => {
    expect(ts(ev({ timestamp: '2023-01-01T09:30:00.123456+02:00' })).data.timestamp).toBe(
      '2023-01-01T07:30:00.123Z',
    );
  });

  it('$ignore_sent_at keeps the timestamp as sent (and $sent_at is still recorded)', () => {
    const r = ts(
      ev({ timestamp: '2023-01-01T11:00:00Z', properties: { $ignore_sent_at: true } }),
      ctx({ sentAt: '2023-01-01T12:00:10Z' }),
    );
    expect(r.data.timestamp).toBe('2023-01-01T11:00:00.000Z');
    expect(r.data.properties.$sent_at).toBe('2023-01-01T12:00:10.000Z');
  });

  it('offset overrides the timestamp, 0 included', () => {
    expect(ts(ev({ timestamp: '2020-01-01T00:00:00Z', offset: 1500 })).data.timestamp).toBe(
      '2023-01-01T11:59:58.500Z',
    );
    expect(ts(ev({ timestamp: '2020-01-01T00:00:00Z', offset: 0 })).data.timestamp).toBe(
      '2023-01-01T12:00:00.000Z',
    );
  });

  it('more than 23 hours ahead → now with event_timestamp_in_future; exactly 23 hours is kept', () => {
    const r = ts(ev({ timestamp: '2023-01-02T11:00:00.001Z' }));
    expect(r.data.timestamp).toBe('2023-01-01T12:00:00.000Z');
    expect(r.warnings).toEqual([
      {
        type: 'event_timestamp_in_future',
        details: expect.objectContaining({
          eventUuid: r.data.uuid,
          timestamp: '2023-01-02T11:00:00.001Z',
          result: '2023-01-02T11:00:00.001Z',
          now: '2023-01-01T12:00:00.000Z',
        }),
      },
    ]);
    expect(ts(ev({ timestamp: '2023-01-02T11:00:00Z' })).data.timestamp).toBe(
      '2023-01-02T11:00:00.000Z',
    );
  });

  it('an unparseable timestamp → now with ignored_invalid_timestamp', () => {
    const r = ts(ev({ timestamp: 'last tuesday' }));
    expect(r.data.timestamp).toBe('2023-01-01T12:00:00.000Z');
    expect(r.warnings).toEqual([
      {
        type: 'ignored_invalid_timestamp',
        details: {
          eventUuid: r.data.uuid,
          field: 'timestamp',
          value: 'last tuesday',
          reason: 'unparseable',
        },
      },
    ]);
  });

  it('an unparseable sent_at → warning, no skew correction, no $sent_at', () => {
    const r = ts(ev({ timestamp: '2023-01-01T11:00:00Z' }), ctx({ sentAt: 'soon' }));
    expect(r.data).toMatchObject({ timestamp: '2023-01-01T11:00:00.000Z', sentAt: null });
    expect(r.data.properties).not.toHaveProperty('$sent_at');
    expect(r.warnings).toMatchObject([
      { type: 'ignored_invalid_timestamp', details: { field: 'sent_at', value: 'soon' } },
    ]);
  });

  it.each([
    ['2022-12-31 10:00:00.123456', '2022-12-31T10:00:00.123Z'],
    ['2022-12-31 10:00:00+01', '2022-12-31T09:00:00.000Z'],
    ['2022-12-31T10:00:00-0130', '2022-12-31T11:30:00.000Z'],
    ['2022-12-31T10:00', '2022-12-31T10:00:00.000Z'],
    ['2022-12-31', '2022-12-31T00:00:00.000Z'],
    ['2022-12-31 10:00:00 UTC', '2022-12-31T10:00:00.000Z'],
    ['Sat, 31 Dec 2022 10:00:00 +0200', '2022-12-31T08:00:00.000Z'],
    [1672480800, '2022-12-31T10:00:00.000Z'],
    [1672480800123, '2022-12-31T10:00:00.123Z'],
    ['1672480800', '2022-12-31T10:00:00.000Z'],
  ])('timestamp %j → %s', (input, expected) => {
    expect(ts(ev({ timestamp: input })).data.timestamp).toBe(expected);
  });

  it.each([
    '2022-02-30T10:00:00Z',
    '2022-13-01',
    '2022-12-31T25:00:00Z',
    '12:00',
    'Dec 2022',
    true,
    {},
  ])('timestamp %j does not parse', (input) => {
    expect(ts(ev({ timestamp: input })).warnings.map((w) => w.type)).toEqual([
      'ignored_invalid_timestamp',
    ]);
  });

  it('a skew-corrected result before year 0 → now with a warning', () => {
    const r = ts(
      ev({ timestamp: '0000-01-01T00:00:00Z' }),
      ctx({ sentAt: '9999-01-01T00:00:00Z' }),
    );
    expect(r.data.timestamp).toBe('2023-01-01T12:00:00.000Z');
    expect(r.warnings).toMatchObject([
      { type: 'ignored_invalid_timestamp', details: { reason: 'out of bounds' } },
    ]);
  });
});
