import type pg from 'pg';

export type AppendNotifier = {
  /** A promise that settles on the next append anywhere (any process), or after the poll interval. */
  nextWake(): Promise<void>;
  wake(): void;
  close(): Promise<void>;
};

/**
 * LISTEN/NOTIFY carries appends made by other processes (the CLI beside a running server); the
 * poll interval is only a safety net for a dropped listener connection.
 */
export function createAppendNotifier(pool: pg.Pool, channel: string, pollMs = 1000): AppendNotifier {
  let waiters: Array<() => void> = [];
  let listener: pg.PoolClient | undefined;
  let closed = false;
  let connecting: Promise<void> | undefined;

  const wake = () => {
    const current = waiters;
    waiters = [];
    for (const w of current) w();
  };

  const connect = () => {
    connecting ??= (async () => {
      try {
        const client = await pool.connect();
        if (closed) return client.release();
        client.on('notification', wake);
        client.on('error', () => {
          listener = undefined;
          connecting = undefined;
          client.release(true);
        });
        await client.query(`LISTEN ${channel}`);
        listener = client;
      } catch {
        connecting = undefined;
      }
    })();
  };

  return {
    nextWake() {
      if (!listener && !closed) connect();
      return new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        timer.unref();
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
    wake,
    async close() {
      closed = true;
      wake();
      await connecting;
      if (listener) {
        const l = listener;
        listener = undefined;
        await l.query(`UNLISTEN ${channel}`).catch(() => undefined);
        l.release();
      }
    },
  };
}
