import type pg from 'pg';

/**
 * Key uniqueness spans streams (every flag is its own stream), so "is the key free?" followed by
 * an append is a race between two requests claiming the same key. Claims of one (project, key)
 * therefore run one at a time, from the check until the read model shows the outcome:
 * - in this process, through a queue per key (waiters hold no database connection, so they cannot
 *   starve the pool the holder needs to append and project);
 * - across processes, through a Postgres session advisory lock (two-int form, a lock space apart
 *   from the single-key locks used elsewhere).
 */
const queues = new Map<string, Promise<void>>();

export async function withFlagKeyLock<T>(pool: pg.Pool, projectId: number, key: string, fn: () => Promise<T>): Promise<T> {
  const name = `${projectId}\u0000${key}`;
  const previous = queues.get(name) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => {
    release = resolve;
  });
  const tail = previous.then(() => mine);
  queues.set(name, tail);
  await previous;
  try {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('SELECT pg_advisory_lock($1::int4, hashtext($2))', [projectId, key]).catch((e: Error) => {
        broken = e;
        throw e;
      });
      try {
        return await fn();
      } finally {
        await client.query('SELECT pg_advisory_unlock($1::int4, hashtext($2))', [projectId, key]).catch((e: Error) => {
          broken = e; // a dropped session releases its locks; discard the client rather than reuse it
        });
      }
    } finally {
      client.release(broken);
    }
  } finally {
    release();
    if (queues.get(name) === tail) queues.delete(name);
  }
}
