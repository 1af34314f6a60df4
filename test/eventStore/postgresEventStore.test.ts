import { afterAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createPool } from '../../src/db/postgres.ts';
import type { RecordedEvent } from '../../src/core/event.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { createPostgresEventStore, eventLogSchema } from '../../src/eventStore/postgresEventStore.ts';
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
    const blocked = store.appendToStream('gap-fast', [{ type: 'Fast', data: {}, metadata: { occurredAt: 'x' } }], { expectedRevision: 'any' });
    const raced = await Promise.race([blocked.then(() => 'appended'), new Promise((r) => setTimeout(() => r('waiting'), 300))]);
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
          await store.appendToStream(`gap-${w}`, [{ type: 'E', data: { w, i }, metadata: { occurredAt: 'x' } }], { expectedRevision: 'any' });
        }
      }),
    );
    const total = writers * perWriter + 1;
    const deadline = Date.now() + 10_000;
    while (seen.length < total && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await sub.stop();
    expect(seen).toHaveLength(total);
    const positions = seen.map((e) => e.position);
    expect([...positions].sort((a, b) => (a < b ? -1 : 1))).toEqual(positions);
    expect(new Set(positions).size).toBe(total);
    const all = await store.readAll();
    expect(all.map((e) => e.position)).toEqual(positions);
  });
});
