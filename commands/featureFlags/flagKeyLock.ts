import type pg from 'pg';

/**
 * Key uniqueness spans streams (every flag is its own stream), so "is the key free?" followed by
 * an append is a race between two requests claiming the same key. Claims of one (project, key)
 * therefore run one at a time, from the check until the read model shows the outcome:
 * - in this process, through a queue per key;
 * - across processes, through a Postgres session advisory lock (two-int form, a lock space apart
 *   from the single-key locks used elsewhere).
 * The advisory lock pins a pooled connection while the holder works with others (check, append,
 * projection), so at most MAX_HOLDERS claims per process hold one at a time; the rest wait in
 * memory, never on a connection, and the pool cannot be starved.
 */
const MAX_HOLDERS = 2;
let holders = 0;
const waitingForSlot: Array<() => void> = [];
const queues = new Map<string, Promise<void>>();

async function acquireSlot(): Promise<void> {
  if (holders < MAX_HOLDERS) {
    holders++;
    return;
  }
  await new Promise<void>((resolve) => waitingForSlot.push(resolve));
}

function releaseSlot(): void {
  const next = waitingForSlot.shift();
  if (next)
    next(); // the slot passes straight to the next waiter
  else holders--;
}

export async function withFlagKeyLock<T>(
  pool: pg.Pool,
  projectId: number,
  key: string,
  fn: () => Promise<T>,
): Promise<T> {
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
    await acquireSlot();
    try {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client
          .query('SELECT pg_advisory_lock($1::int4, hashtext($2))', [projectId, key])
          .catch((e: Error) => {
            broken = e;
            throw e;
          });
        try {
          return await fn();
        } finally {
          await client
            .query('SELECT pg_advisory_unlock($1::int4, hashtext($2))', [projectId, key])
            .catch((e: Error) => {
              broken = e; // a dropped session releases its locks; discard the client rather than reuse it
            });
        }
      } finally {
        client.release(broken);
      }
    } finally {
      releaseSlot();
    }
  } finally {
    release();
    if (queues.get(name) === tail) queues.delete(name);
  }
}
