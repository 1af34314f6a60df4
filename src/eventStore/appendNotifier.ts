import type pg from 'pg';

export type AppendNotifier = {
  /** A promise that settles on the next append anywhere (any process), or after the poll interval. */
  nextWake(): Promise<void>;
  wake(): void;
  close(): Promise<void>;
};

/**
 * LISTEN/NOTIFY carries appends made by other processes (the CLI beside a running server); the
 * poll interval is only a safety net for a dropped listener connection. A notification's payload
 * is the append's last position: `isNews` says whether it tells this process anything (its own
 * appends come back too, already handed over in memory); one that does not wakes nobody.
 */
export function createAppendNotifier(
  pool: pg.Pool,
  channel: string,
  pollMs = 1000,
  isNews: (payload: string | undefined) => boolean = () => true,
): AppendNotifier {
  let waiters: Array<() => void> = [];
  let listener: pg.PoolClient | undefined;
  let listenerState: { released: boolean } | undefined;
  let closed = false;
  let connecting: Promise<void> | undefined;

  const wake = () => {
    const current = waiters;
    waiters = [];
    for (const w of current) w();
  };

  /** Gives a client back exactly once, whoever notices first (an error, a failed LISTEN, close()). */
  const releaseOnce = (client: pg.PoolClient, state: { released: boolean }, destroy: boolean) => {
    if (state.released) return;
    state.released = true;
    client.release(destroy);
  };

  const connect = () => {
    connecting ??= (async () => {
      const client = await pool.connect().catch(() => undefined);
      if (!client) {
        connecting = undefined;
        return;
      }
      const state = { released: false };
      if (closed) return releaseOnce(client, state, false);
      client.on('notification', (message: pg.Notification) => {
        if (isNews(message.payload)) wake();
      });
      client.on('error', () => {
        if (listener === client) listener = undefined;
        connecting = undefined;
        releaseOnce(client, state, true);
      });
      try {
        await client.query(`LISTEN ${channel}`);
        listener = client;
        listenerState = state;
      } catch {
        connecting = undefined;
        releaseOnce(client, state, true);
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
      if (listener && listenerState) {
        const l = listener;
        const state = listenerState;
        listener = undefined;
        await l.query(`UNLISTEN ${channel}`).catch(() => undefined);
        releaseOnce(l, state, false);
      }
    },
  };
}
