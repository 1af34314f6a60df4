import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  EventCaptured,
  EventCapturedData,
} from '../../../commands/capture/model/eventCaptured.ts';
import { eventsProjection } from '../../../projections/events/eventsProjection.ts';
import {
  EVENT_COLUMNS,
  encodeEventsRowBinary,
  eventRow,
} from '../../../projections/events/eventsRowBinary.ts';
import type { RecordedEvent } from '../../../src/core/event.ts';
import { isAboutTheEvents } from '../../../src/processing/poisonEvents.ts';
import { type ClickHouse, openClickHouse } from '../../../src/runtime/clickhouse.ts';
import { clickHouseQueryError } from '../../../src/runtime/clickhouseErrors.ts';

/**
 * The events insert sends RowBinary (issue #27): the rows it stores must be byte for byte those
 * the JSONCompactEachRow insert stored before, which ClickHouse parsed itself (`best_effort`
 * times, uuids, JSON string escapes); a batch with a value only that parser reads the same way
 * goes as text, and what ClickHouse refuses still fails as a parse error (parked events).
 */
let live: ClickHouse;
let reference: ClickHouse;
const dir = path.join(os.tmpdir(), `hogstream-chdb-${process.pid}`);
beforeAll(async () => {
  live = await openClickHouse(undefined, dir, 'events_insert_live');
  reference = await openClickHouse(undefined, dir, 'events_insert_reference');
  for (const ch of [live, reference])
    for (const statement of eventsProjection.ddl(ch.database))
      await ch.client.command({ query: statement });
});
afterAll(async () => {
  await live?.close();
  await reference?.close();
});

let nextPosition = 1n;
const captured = (
  data: Partial<EventCapturedData>,
  position = nextPosition++,
): RecordedEvent<EventCaptured> => ({
  type: 'EventCaptured',
  id: crypto.randomUUID(),
  streamName: 'capture-1:x',
  revision: 0n,
  position,
  metadata: { occurredAt: '2024-11-24T10:00:00.000Z' },
  recordedAt: new Date(),
  data: {
    uuid: crypto.randomUUID(),
    projectId: 1,
    event: '$pageview',
    distinctId: 'user-1',
    properties: { $browser: 'Chrome' },
    timestamp: '2024-11-24T10:00:00.123Z',
    elementsChain: '',
    sentAt: null,
    receivedAt: '2024-11-24T10:00:01.000Z',
    ip: null,
    ...data,
  },
});

/** The insert as it was before RowBinary: rows as text, parsed by ClickHouse. */
const insertAsText = (events: RecordedEvent<EventCaptured>[], token: string) =>
  reference.client.insert({
    table: `${reference.database}.events`,
    values: events.map((e) => eventRow(e, new Date().toISOString())),
    columns: [...EVENT_COLUMNS],
    format: 'JSONCompactEachRow',
    clickhouse_settings: {
      insert_deduplication_token: token,
      date_time_input_format: 'best_effort',
    },
  });

/** Every stored byte but `_timestamp` (the insert's clock), as ClickHouse prints it (TSV: bytes as they are). */
const stored = async (ch: ClickHouse, positions: readonly bigint[]) => {
  const result = await ch.client.query({
    query: `SELECT * EXCEPT _timestamp FROM ${ch.database}.events
      WHERE _offset IN (${positions.join(',')}) ORDER BY _offset`,
    format: 'TabSeparated',
  });
  return result.text();
};

const exact = [
  captured({
    event: 'ünïcödé 事件 🎉',
    distinctId: '👩‍💻 user',
    properties: { a: 'é\u2028\u0000' },
  }),
  captured({ event: 'tab\there, newlines\n\nhere\r', elementsChain: 'a:text="x\ny"' }),
  captured({ event: 'back\\slash "quotes" \'single\'', distinctId: '' }),
  // one varint byte at most (42 × 3 < 128) and past it (43 × 3), 2-byte varint lengths
  captured({ event: 'é'.repeat(42), distinctId: 'é'.repeat(43), elementsChain: 'x'.repeat(300) }),
  captured({ timestamp: '2024-11-24T10:00:00Z', receivedAt: '2024-11-24T10:00:00.123456Z' }),
  captured({ timestamp: '1970-01-01T00:00:00.000Z', receivedAt: '2105-12-31T23:59:59.999Z' }),
  captured({ uuid: '0192F0C4-7B1E-7D3A-9C4E-4F1A2B3C4D5E', projectId: 2 ** 40 + 7 }),
  captured({
    properties: { $group_0: 'acme', $group_4: 'é', $group_2: 7, $set: { n: [1, { x: null }] } },
  }),
  // positions whose bytes hold two newlines in a row (0x0A0A): chDB's inline data would end there
  captured({}, 2570n),
  captured({}, 2n ** 40n + 2570n),
];

describe('the events insert', () => {
  it('sends RowBinary that stores what the text insert stored, byte for byte', async () => {
    expect(encodeEventsRowBinary(exact, new Date())).not.toBeNull();
    await eventsProjection.insert(live, exact, 'exact');
    await insertAsText(exact, 'exact');
    const positions = exact.map((e) => e.position);
    const rows = await stored(live, positions);
    expect(rows.trim().split('\n')).toHaveLength(exact.length);
    expect(rows).toBe(await stored(reference, positions));
  });

  it('sends a batch as text when a value has no certain binary form, storing the same', async () => {
    const loose = [
      captured({ timestamp: '2024-11-24 10:00:00' }),
      captured({ timestamp: '2024-11-24T12:00:00.5+02:00' }),
      captured({ timestamp: '1960-05-01T00:00:00.000Z' }),
      captured({ uuid: '0192f0c47b1e7d3a9c4e4f1a2b3c4d5e' }),
    ];
    for (const e of loose) expect(encodeEventsRowBinary([exact[0]!, e], new Date())).toBeNull();
    await eventsProjection.insert(live, loose, 'loose');
    await insertAsText(loose, 'loose');
    const positions = loose.map((e) => e.position);
    expect((await stored(live, positions)).trim().split('\n')).toHaveLength(loose.length);
    expect(await stored(live, positions)).toBe(await stored(reference, positions));
  });

  it('stores batches encoded while others are in flight as they were (bodies reuse memory)', async () => {
    const batches = [0, 1, 2].map((b) =>
      Array.from({ length: 50 }, (_, i) =>
        captured({ event: `concurrent ${b} ${i}`.repeat(b + 1) }),
      ),
    );
    await Promise.all(
      batches.map((batch, b) => eventsProjection.insert(live, batch, `concurrent-${b}`)),
    );
    await eventsProjection.insert(live, exact, 'after-concurrent');
    for (const [b, batch] of batches.entries()) await insertAsText(batch, `concurrent-${b}`);
    const positions = batches.flat().map((e) => e.position);
    expect((await stored(live, positions)).trim().split('\n')).toHaveLength(150);
    expect(await stored(live, positions)).toBe(await stored(reference, positions));
  });

  it('stores a batch sent again with its deduplication token once', async () => {
    const batch = [captured({}), captured({ event: 'again' })];
    await eventsProjection.insert(live, batch, 'retried');
    await eventsProjection.insert(live, batch, 'retried');
    const rows = await stored(
      live,
      batch.map((e) => e.position),
    );
    expect(rows.trim().split('\n')).toHaveLength(2);
  });

  it.each([
    ['a time no parser reads', { timestamp: 'the day after tomorrow' }],
    ['a lone surrogate (its JSON escape)', { event: 'lone \ud800 surrogate' }],
  ])(
    'fails on a value ClickHouse refuses, %s, as a parse error about the event (parked)',
    async (_, data) => {
      const batch = [captured({}), captured(data)];
      expect(encodeEventsRowBinary(batch, new Date())).toBeNull();
      const error = await eventsProjection
        .insert(live, batch, `refused-${batch[1]!.position}`)
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(error).not.toBeNull();
      expect(clickHouseQueryError(error)?.type).toMatch(/^CANNOT_PARSE/);
      expect(isAboutTheEvents(error)).toBe(true);
    },
  );
});

describe('insertRaw', () => {
  it("reports ClickHouse's refusal as a ClickHouse error with its code and name", async () => {
    const columns = ['uuid', 'event'];
    const error = await live
      .insertRaw(
        `${live.database}.events`,
        columns,
        'TabSeparated',
        Buffer.from('not-a-uuid\tx\n'),
        {},
      )
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toMatchObject({ code: '376', type: 'CANNOT_PARSE_UUID' });
    expect(clickHouseQueryError(error)?.type).toBe('CANNOT_PARSE_UUID');
    expect(isAboutTheEvents(error)).toBe(true);
  });

  it('takes per-insert settings in the statement only', async () => {
    const columns = ['uuid', 'event', 'timestamp', '_offset'];
    const body = (offset: number) =>
      Buffer.from(`${crypto.randomUUID()}\tsettings\t2024-11-24 10:00:00\t${offset}\n`);
    await live.insertRaw(`${live.database}.events`, columns, 'TabSeparated', body(900_001), {
      insert_deduplication_token: 'one-token',
    });
    // another body with the same token is a duplicate; a later insert without it is not
    await live.insertRaw(`${live.database}.events`, columns, 'TabSeparated', body(900_002), {
      insert_deduplication_token: 'one-token',
    });
    await live.insertRaw(`${live.database}.events`, columns, 'TabSeparated', body(900_003), {});
    const rows = await stored(live, [900_001n, 900_002n, 900_003n]);
    expect(
      rows
        .trim()
        .split('\n')
        .map((r) => r.split('\t').at(-1)),
    ).toEqual(['900001', '900003']);
  });
});
