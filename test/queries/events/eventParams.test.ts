import { describe, expect, it } from 'vitest';
import { formatTimestamp } from '../../../projections/events/eventsReader.ts';
import { parseDateParam } from '../../../projections/shared/dateParam.ts';
import { escapeLike } from '../../../projections/shared/propertyFilterTree.ts';
import { offsetUrl, stringList, timestampCursorUrl } from '../../../queries/events/eventCursor.ts';
import { eventsCsv, selectCsv, toEventView } from '../../../queries/events/eventView.ts';
import { isUuid } from '../../../src/core/uuid.ts';

const NOW = new Date('2024-03-31T12:00:00.000Z');

describe('dates, cursors and parameters', () => {
  it('parses ISO and relative dates', () => {
    expect(parseDateParam('2024-01-02T03:04:05.123456+02:00', NOW)).toBe(
      '2024-01-02T03:04:05.123456+02:00',
    );
    expect(parseDateParam('2024-01-02 03:04:05.1 00:00', NOW)).toBe('2024-01-02 03:04:05.1+00:00'); // "+" lost in a query string
    expect(parseDateParam('2024-01-02', NOW)).toBe('2024-01-02');
    expect(parseDateParam('-24h', NOW)).toBe('2024-03-30T12:00:00.000Z');
    expect(parseDateParam('2w', NOW)).toBe('2024-03-17T12:00:00.000Z');
    expect(parseDateParam('-1m', NOW)).toBe('2024-02-29T12:00:00.000Z'); // clamped to the month's end
    expect(parseDateParam('-1y', NOW)).toBe('2023-03-31T12:00:00.000Z');
    for (const bad of [
      'yesterday',
      '2024-13-01',
      '2024-01-01T25:00',
      '-10000d',
      '1 day',
      '2024-01-01t00:00:00z',
      '',
    ]) {
      expect(parseDateParam(bad, NOW), bad).toBeNull();
    }
  });

  it('builds next links: a timestamp cursor without offset, or the next offset', () => {
    const base = new URL(
      'http://h:1/api/projects/1/events/?event=a&limit=2&offset=4&before=x&after_uuid=u',
    );
    const next = new URL(
      timestampCursorUrl(base, true, {
        timestamp: '2024-01-01T00:00:00.000000+00:00',
        uuid: 'id1',
      }),
    );
    expect(Object.fromEntries(next.searchParams)).toEqual({
      event: 'a',
      limit: '2',
      before: '2024-01-01T00:00:00.000000+00:00',
      before_uuid: 'id1',
    });
    expect(next.search).toContain('%2B00%3A00');
    const asc = new URL(timestampCursorUrl(base, false, { timestamp: 't', uuid: 'id2' }));
    expect(asc.searchParams.get('after')).toBe('t');
    expect(asc.searchParams.get('after_uuid')).toBe('id2');
    expect(asc.searchParams.get('before')).toBe('x');
    expect(Object.fromEntries(new URL(offsetUrl(base, 4, 2)).searchParams)).toMatchObject({
      offset: '6',
      limit: '2',
      event: 'a',
    });
  });

  it('reads JSON string lists, repeated or not', () => {
    expect(stringList('["a","b"]', 'select')).toEqual(['a', 'b']);
    expect(stringList(['["a"]', '"b"'], 'where')).toEqual(['a', 'b']);
    expect(stringList(undefined, 'x')).toBeUndefined();
    expect(stringList('a', 'where')).toEqual({
      error: 'where must be a JSON array of strings, e.g. where=["event"]',
    });
    expect(stringList('[1]', 'where')).toEqual({ error: 'where must be a JSON array of strings' });
  });

  it('formats timestamps and recognises UUIDs', () => {
    expect(formatTimestamp('2023-09-15 09:15:02.325000')).toBe('2023-09-15T09:15:02.325000+00:00');
    expect(isUuid('0189f1a2-3b4c-7d5e-8f90-123456789abc')).toBe(true);
    expect(isUuid('0189f1a2-3b4c-7d5e-8f90-123456789ab')).toBe(false);
    expect(escapeLike('a%b_c\\')).toBe('a\\%b\\_c\\\\');
  });
});

describe('event view and CSV', () => {
  const row = {
    _id: 'u1',
    _distinct_id: 'd',
    _properties: '{"a":1,"b":{"c":"x,y"}}',
    _event: 'e',
    _ts: '2024-01-01 00:00:00.000000',
    _elements_chain: 'a:nth-child="1"nth-of-type="2"',
  };

  it('maps a row to the REST event object', () => {
    expect(toEventView(row)).toEqual({
      id: 'u1',
      distinct_id: 'd',
      properties: { a: 1, b: { c: 'x,y' } },
      event: 'e',
      timestamp: '2024-01-01T00:00:00.000000+00:00',
      person: null,
      elements: [
        {
          event: null,
          text: null,
          tag_name: 'a',
          attr_class: null,
          href: null,
          attr_id: null,
          nth_child: 1,
          nth_of_type: 2,
          attributes: {},
          order: 0,
        },
      ],
      elements_chain: 'a:nth-child="1"nth-of-type="2"',
    });
    expect(toEventView({ ...row, _properties: 'not json' }).properties).toEqual({});
  });

  it('flattens events into CSV columns and quotes values', () => {
    const [header, line] = eventsCsv([toEventView(row)])
      .trim()
      .split('\n');
    expect(header).toBe(
      'id,distinct_id,properties.a,properties.b.c,event,timestamp,person,elements.0.event,elements.0.text,elements.0.tag_name,elements.0.attr_class,elements.0.href,elements.0.attr_id,elements.0.nth_child,elements.0.nth_of_type,elements.0.attributes,elements.0.order,elements_chain',
    );
    expect(line).toBe(
      'u1,d,1,"x,y",e,2024-01-01T00:00:00.000000+00:00,,,,a,,,,1,2,,0,"a:nth-child=""1""nth-of-type=""2"""',
    );
    expect(eventsCsv([]).trim()).toBe(
      'id,distinct_id,properties,event,timestamp,person,elements,elements_chain',
    );
    expect(
      selectCsv(
        ['x', 'count()'],
        [
          ['a', 1],
          [true, null],
        ],
      ),
    ).toBe('x,count()\na,1\ntrue,\n');
  });
});
