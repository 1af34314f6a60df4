import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../src/db/postgres.ts';
import {
  rebuildRequestsSchema,
  rebuildThroughServer,
  serveRebuildRequests,
} from '../../src/processing/rebuildRequests.ts';
import { createTestDatabase } from '../support/testDatabase.ts';

/**
 * The CLI's side of a rebuild a running server does: it polls the request's row until the server
 * finishes it. Polls that fail (no connection in time on a machine the rebuild keeps busy) are
 * missed looks, not a failed rebuild; a server that stops reporting still ends the wait.
 */
let pool: pg.Pool;
beforeAll(async () => {
  pool = createPool(await createTestDatabase(), 5);
  await pool.query(rebuildRequestsSchema);
});
afterAll(async () => {
  await pool?.end();
});

describe('waiting for a rebuild through the running server', () => {
  it('goes on through polls that fail, and gets the result', async () => {
    const stop = serveRebuildRequests({
      pool,
      pollMs: 20,
      run: async (_target, onProgress) => {
        onProgress({ name: 'clickhouse:events', position: 5n, head: 10n, events: 0 });
        await new Promise((r) => setTimeout(r, 300));
        onProgress({ name: 'clickhouse:events', position: 10n, head: 10n, events: 0 });
        return [{ name: 'clickhouse:events', position: '10' }];
      },
    });
    // the CLI's pool: its first polls fail as pg fails a connection it could not open in time
    let failures = 3;
    const flaky = new Proxy(pool, {
      get(target, key) {
        if (key !== 'query') return Reflect.get(target, key);
        return (text: string, values?: unknown[]) =>
          text.startsWith('SELECT') && failures-- > 0
            ? Promise.reject(new Error('Connection terminated due to connection timeout'))
            : target.query(text, values);
      },
    });
    try {
      const seen: bigint[] = [];
      const result = await rebuildThroughServer(flaky, 'events', {
        pollMs: 20,
        onProgress: (p) => seen.push(p.position),
      });
      expect(failures).toBeLessThan(0);
      expect(result).toEqual([{ name: 'clickhouse:events', position: '10' }]);
      expect(seen.at(-1)).toBe(10n);
    } finally {
      await stop();
    }
  });

  it('gives up on a server that took the request and stopped reporting', async () => {
    const rejected = rebuildThroughServer(pool, 'events', { pollMs: 20, stallTimeoutMs: 300 });
    // a server that claims the request and dies
    await new Promise((r) => setTimeout(r, 50));
    await pool.query('UPDATE rebuild_requests SET started_at = now() WHERE finished_at IS NULL');
    await expect(rejected).rejects.toThrow('stopped reporting progress');
  });
});
