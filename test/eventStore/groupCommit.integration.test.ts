import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createPool } from '../../src/db/postgres.ts';
import { createGroupCommitter } from '../../src/eventStore/groupCommit.ts';
import {
  createPostgresEventStore,
  eventLogSchema,
} from '../../src/eventStore/postgresEventStore.ts';
import { createTestDatabase } from '../support/testDatabase.ts';

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup) await c();
});

async function open() {
  const pool = createPool(await createTestDatabase(), 20);
  await pool.query(eventLogSchema);
  const store = createPostgresEventStore(pool);
  cleanup.push(async () => {
    await store.close();
    await pool.end();
  });
  return store;
}
const ev = (n: number) => ({
  type: 'E',
  data: { n },
  metadata: { occurredAt: new Date().toISOString() },
});

describe('group commit', () => {
  it('folds concurrent callers into few transactions and gives each caller its own results', async () => {
    const store = await open();
    const committer = createGroupCommitter(store);
    const callers = 200;
    const results = await Promise.all(
      Array.from({ length: callers }, (_, i) =>
        committer.append([
          { streamName: `gc-${i % 7}`, events: [ev(i), ev(i)], expectedRevision: 'any' },
        ]),
      ),
    );
    const stats = committer.stats();
    expect(stats.events).toBe(callers * 2);
    expect(stats.commits).toBeLessThan(callers / 4);
    expect((await store.readAll()).length).toBe(callers * 2);
    for (const [r] of results) expect(r!.position).toBeGreaterThan(0n);
    expect(new Set(results.map(([r]) => r!.position)).size).toBe(callers);
  });

  it('a failing caller does not fail the callers committed with it', async () => {
    const store = await open();
    const committer = createGroupCommitter(store);
    const taken = `gc-${randomUUID()}`;
    await store.appendToStream(taken, [ev(0)], { expectedRevision: 'no_stream' });
    const outcomes = await Promise.allSettled([
      committer.append([
        { streamName: `ok-${randomUUID()}`, events: [ev(1)], expectedRevision: 'any' },
      ]),
      committer.append([{ streamName: taken, events: [ev(2)], expectedRevision: 'no_stream' }]),
      committer.append([
        { streamName: `ok-${randomUUID()}`, events: [ev(3)], expectedRevision: 'any' },
      ]),
      committer.append([
        { streamName: `ok-${randomUUID()}`, events: [ev(4)], expectedRevision: 'any' },
      ]),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    expect((await store.readAll()).map((e) => e.data)).toEqual([
      { n: 0 },
      { n: 1 },
      { n: 3 },
      { n: 4 },
    ]);
  });
});
