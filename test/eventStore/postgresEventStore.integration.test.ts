import type pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../src/core/event.ts';
import { createPool } from '../../src/db/postgres.ts';
import type { EventStore, ReadAllOptions } from '../../src/eventStore/eventStore.ts';
import { createLiveTail } from '../../src/eventStore/liveTail.ts';
import {
  createPostgresEventStore,
  eventLogSchema,
} from '../../src/eventStore/postgresEventStore.ts';
import { createTestDatabase } from '../support/testDatabase.ts';
import { appendManyContract, eventStoreContract } from './eventStoreContract.ts';

const opened: { pool: pg.Pool; store: EventStore }[] = [];
async function open(poolSize = 10): Promise<EventStore & { pool: pg.Pool }> {
  const pool = createPool(await createTestDatabase(), poolSize);
  await pool.query(eventLogSchema);
  const store = createPostgresEventStore(pool);
  opened.push({ pool, store });
  return Object.assign(store, { pool });
}
afterAll(async () => {
  for (const { pool, store } of opened) {
    await store.close();
    await pool.end();
  }
});

eventStoreContract('postgres', () => open());
appendManyContract('postgres (one transaction)', () => open());

describe('postgres event log: the sequence-gap problem', () => {
  it('never lets a subscriber skip an event whose transaction commits after a higher-numbered one', async () => {
    const store = await open(20);
    // A writer that holds its transaction open after drawing a position must block later writers,
    // otherwise they would commit higher positions first and a reader would move past the gap.
    const slow = await store.pool.connect();
    await slow.query('BEGIN');
    await slow.query(`SELECT pg_advisory_xact_lock(${0x6576_656e_746c_6f67n})`);
    const blocked = store.appendToStream(
      'gap-fast',
      [{ type: 'Fast', data: {}, metadata: { occurredAt: 'x' } }],
      { expectedRevision: 'any' },
    );
    const raced = await Promise.race([
      blocked.then(() => 'appended'),
      new Promise((r) => setTimeout(() => r('waiting'), 300)),
    ]);
    expect(raced).toBe('waiting');
    await slow.query('ROLLBACK');
    slow.release();
    await blocked;

    // Many concurrent writers and a concurrent reader: the reader sees every event, in position order.
    const seen: RecordedEvent[] = [];
    const sub = store.subscribeToAll((e) => void seen.push(e));
    const writers = 12;
    const perWriter = 40;
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let i = 0; i < perWriter; i++) {
          await store.appendToStream(
            `gap-${w}`,
            [{ type: 'E', data: { w, i }, metadata: { occurredAt: 'x' } }],
            { expectedRevision: 'any' },
          );
        }
      }),
    );
    const total = writers * perWriter + 1;
    const deadline = Date.now() + 10_000;
    while (seen.length < total && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    await sub.stop();
    expect(seen).toHaveLength(total);
    const positions = seen.map((e) => e.position);
    expect([...positions].sort((a, b) => (a < b ? -1 : 1))).toEqual(positions);
    expect(new Set(positions).size).toBe(total);
    const all = await store.readAll();
    expect(all.map((e) => e.position)).toEqual(positions);
  });
});

describe('postgres event log: live subscriptions share one read of the newest events', () => {
  it('gives every subscriber exactly its events, in order, also when a slow one falls out of the shared window', async () => {
    const pool = createPool(await createTestDatabase(), 20);
    await pool.query(eventLogSchema);
    // A tiny window forces refills and trimming while subscribers read.
    const store = createPostgresEventStore(pool, { liveTail: { capacity: 30, fetch: 7 } });
    opened.push({ pool, store });
    const seen = {
      all: [] as RecordedEvent[],
      typeA: [] as RecordedEvent[],
      prefixed: [] as RecordedEvent[],
      slow: [] as RecordedEvent[],
    };
    const subs = [
      store.subscribeToAll((e) => void seen.all.push(e)),
      store.subscribeToAll((e) => void seen.typeA.push(e), { filter: { eventTypes: ['A'] } }),
      store.subscribeToAll((e) => void seen.prefixed.push(e), {
        filter: { streamPrefixes: ['x-'] },
      }),
      store.subscribeToAll(async (e) => {
        seen.slow.push(e);
        await new Promise((r) => setTimeout(r, 2));
      }),
    ];
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; i < 40; i++) {
          await store.appendToStream(
            `${w % 2 ? 'x' : 'y'}-${w}`,
            [{ type: i % 3 ? 'A' : 'B', data: { w, i }, metadata: { occurredAt: 'x' } }],
            { expectedRevision: 'any' },
          );
        }
      }),
    );
    const all = await store.readAll();
    expect(all).toHaveLength(320);
    const deadline = Date.now() + 20_000;
    while (seen.slow.length < 320 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    for (const s of subs) await s.stop();
    const ids = (events: RecordedEvent[]) => events.map((e) => e.position);
    expect(ids(seen.all)).toEqual(ids(all));
    expect(ids(seen.slow)).toEqual(ids(all));
    expect(ids(seen.typeA)).toEqual(ids(all.filter((e) => e.type === 'A')));
    expect(ids(seen.prefixed)).toEqual(ids(all.filter((e) => e.streamName.startsWith('x-'))));
  });
});

describe('postgres event log: a narrow reader behind the shared window', () => {
  it('reads the log once, then from the shared tail, and still gets its next event', async () => {
    const store = await open();
    const meta = { occurredAt: new Date().toISOString() };
    const other = Array.from({ length: 5 }, () => ({ type: 'Common', data: {}, metadata: meta }));
    await store.appendToStream('narrow-a', other, { expectedRevision: 'any' });
    const filtered: ReadAllOptions[] = [];
    const tail = createLiveTail(
      (options) => {
        if (options.filter) filtered.push(options);
        return store.readAll(options);
      },
      () => store.headPosition(),
    );
    const rare = { eventTypes: ['Rare'] };
    // The window starts at the head, after this reader's cursor: it must look in the log itself.
    const first = await tail.read(-1n, 1000, rare);
    expect(first.events).toEqual([]);
    expect(first.scannedTo).toBe(await store.headPosition());
    const second = await tail.read(first.scannedTo, 1000, rare);
    expect(second.events).toEqual([]);
    expect(filtered).toHaveLength(1); // before the fix every wake queried the log again

    await store.appendToStream('narrow-b', [{ type: 'Rare', data: { n: 1 }, metadata: meta }], {
      expectedRevision: 'any',
    });
    // another process's append, announced as its NOTIFY does
    expect(tail.announce(await store.headPosition())).toBe(true);
    const third = await tail.read(second.scannedTo, 1000, rare);
    expect(third.events.map((e) => e.data)).toEqual([{ n: 1 }]);
  });

  it('asks the log only when an append was announced, or a second after it last did', async () => {
    const store = await open();
    const meta = { occurredAt: new Date().toISOString() };
    const reads: ReadAllOptions[] = [];
    const tail = createLiveTail(
      (options) => {
        reads.push(options);
        return store.readAll(options);
      },
      () => store.headPosition(),
    );
    const rare = { eventTypes: ['Rare'] };
    const first = await tail.read(-1n, 1000, rare);
    const before = reads.length;
    for (let i = 0; i < 5; i++) await tail.read(first.scannedTo, 1000, rare); // wakes with no news
    expect(reads).toHaveLength(before);
    // An append whose announcement was missed (a dropped listener) is found within a second.
    await store.appendToStream('narrow-c', [{ type: 'Rare', data: { n: 2 }, metadata: meta }], {
      expectedRevision: 'any',
    });
    expect((await tail.read(first.scannedTo, 1000, rare)).events).toEqual([]);
    await new Promise((r) => setTimeout(r, 1_100));
    const late = await tail.read(first.scannedTo, 1000, rare);
    expect(late.events.map((e) => e.data)).toEqual([{ n: 2 }]);
  });
});
