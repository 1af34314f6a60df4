import type pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../src/core/event.ts';
import { createPool } from '../../src/db/postgres.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import {
  createPostgresEventStore,
  eventLogSchema,
} from '../../src/eventStore/postgresEventStore.ts';
import { createTestDatabase } from '../support/testDatabase.ts';

/**
 * Appends of this process reach its subscribers in memory (src/eventStore/liveTail.ts `publish`);
 * other processes' appends, and gaps this process cannot vouch for, are read from the log.
 */

type Opened = EventStore & { pool: pg.Pool; rowsRead: () => number };
const opened: Opened[] = [];

/** A store on `url` whose pool counts the log rows its reads return (the pool is the real one). */
async function open(url: string): Promise<Opened> {
  const pool = createPool(url, 10);
  let rows = 0;
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<pg.QueryResult>;
  (pool as unknown as { query: unknown }).query = async (...args: unknown[]) => {
    const result = await query(...args);
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text;
    if (text?.includes('FROM event_log') && Array.isArray(result?.rows)) rows += result.rows.length;
    return result;
  };
  const store = Object.assign(createPostgresEventStore(pool), { pool, rowsRead: () => rows });
  opened.push(store);
  return store;
}
afterAll(async () => {
  for (const store of opened) {
    await store.close();
    await store.pool.end();
  }
});

const until = async (check: () => boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  return check();
};

const event = (n: number, extra: object = {}) => ({
  type: 'Counted',
  data: { n, ...extra },
  metadata: { occurredAt: '2026-11-27T00:00:00.000Z' },
});

describe('the live tail: appends handed over in memory', () => {
  it('gives a caught-up subscriber this process’s appends in batches, as a read of the log returns them, without reading them back', async () => {
    const url = await createTestDatabase();
    const store = await open(url);
    await store.pool.query(eventLogSchema);
    await store.appendToStream('s-0', [event(-1)], { expectedRevision: 'any' });
    const batches: (readonly RecordedEvent[])[] = [];
    let caughtUp = false;
    const sub = store.subscribeToAllInBatches((b) => void batches.push(b), {
      onCaughtUp: () => (caughtUp = true),
    });
    expect(await until(() => caughtUp)).toBe(true);
    const readBefore = store.rowsRead();
    for (let i = 0; i < 20; i++)
      await store.appendMany([
        {
          streamName: `s-${i % 3}`,
          events: [event(2 * i), event(2 * i + 1)],
          expectedRevision: 'any',
        },
      ]);
    expect(await until(() => batches.flat().length === 41)).toBe(true);
    // The 40 events were handed over, not read back from Postgres to deliver them. A few may be:
    // the commit's NOTIFY can wake the subscriber before this process publishes the append, and
    // that wake reads what it finds in the log (a full run of the suite saw 6 once). Without the
    // hand-over all 40 are read back.
    expect(store.rowsRead() - readBefore).toBeLessThan(20);
    await sub.stop();

    const delivered = batches.flat();
    const logged = await store.readAll();
    expect(delivered.map((e) => e.position)).toEqual(logged.map((e) => e.position));
    const comparable = (e: RecordedEvent) => ({ ...e, recordedAt: undefined });
    expect(delivered.map(comparable)).toEqual(logged.map(comparable));
  });

  it('hands over text a store refuses as a read would: U+FFFD for a lone surrogate or a NUL', async () => {
    const url = await createTestDatabase();
    const store = await open(url);
    await store.pool.query(eventLogSchema);
    const seen: RecordedEvent[] = [];
    let caughtUp = false;
    const sub = store.subscribeToAll((e) => void seen.push(e), {
      onCaughtUp: () => (caughtUp = true),
    });
    expect(await until(() => caughtUp)).toBe(true);
    await store.appendToStream('odd', [event(1, { name: 'cut \ud83d here\u0000' })], {
      expectedRevision: 'any',
    });
    expect(await until(() => seen.length === 1)).toBe(true);
    await sub.stop();
    expect(seen[0]!.data).toEqual({ n: 1, name: 'cut \ufffd here\ufffd' });
    expect((await store.readAll())[0]!.data).toEqual(seen[0]!.data);
  });

  it('delivers every event once, in log order, while another process appends in between', async () => {
    const url = await createTestDatabase();
    const ours = await open(url);
    await ours.pool.query(eventLogSchema);
    const theirs = await open(url);
    const seen: RecordedEvent[] = [];
    let caughtUp = false;
    const sub = ours.subscribeToAllInBatches((b) => void seen.push(...b), {
      onCaughtUp: () => (caughtUp = true),
    });
    expect(await until(() => caughtUp)).toBe(true);
    // Interleaved and concurrent: our appends must not be chained over the other process's.
    await Promise.all(
      Array.from({ length: 6 }, async (_, w) => {
        const store = w % 2 === 0 ? ours : theirs;
        for (let i = 0; i < 25; i++)
          await store.appendToStream(`w-${w}`, [event(w * 100 + i)], { expectedRevision: 'any' });
      }),
    );
    // A retry of events already in the log draws positions it does not use: a gap to chain over.
    await ours.appendToStream('w-0', [{ ...event(0), id: (await ours.readAll())[0]!.id }], {
      expectedRevision: 'any',
    });
    await ours.appendToStream('w-0', [event(999)], { expectedRevision: 'any' });
    expect(await until(() => seen.length === 151)).toBe(true);
    await new Promise((r) => setTimeout(r, 100));
    await sub.stop();
    const logged = await ours.readAll();
    expect(seen.map((e) => e.position)).toEqual(logged.map((e) => e.position));
    expect(new Set(seen.map((e) => e.id)).size).toBe(151);
  });
});
