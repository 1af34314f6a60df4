import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { sendBatch, serversOnOneDataDir } from '../support/serverProcess.ts';
import { createTestDatabase } from '../support/testDatabase.ts';

/**
 * `kill -9` of the server while clients capture: after a restart, every event the server
 * acknowledged (200) is in the log exactly once, including those whose clients retried.
 */
const KEY = 'phc_kill_project_key_0001';
const servers = serversOnOneDataDir('hogstream-kill-');
let databaseUrl: string;

afterAll(() => servers.cleanUp());

const start = () =>
  servers.start({ DATABASE_URL: databaseUrl, INIT_PROJECT_API_KEY: KEY, LOG_LEVEL: 'error' });

/** One /batch/ of `uuids`; true when acknowledged. */
const send = (url: string, uuids: readonly string[]) =>
  sendBatch(
    url,
    KEY,
    uuids.map((uuid, i) => ({ event: 'load', distinct_id: `kill-${i % 7}`, uuid })),
  );

describe('kill -9 under load', () => {
  it('keeps every acknowledged event exactly once across a restart', async () => {
    databaseUrl = await createTestDatabase();
    const first = await start();
    const acknowledged = new Set<string>();
    const unanswered: string[][] = [];
    let killed = false;
    const clients = Array.from({ length: 8 }, async () => {
      while (!killed) {
        const batch = Array.from({ length: 20 }, () => randomUUID());
        if (await send(first.url, batch)) for (const u of batch) acknowledged.add(u);
        else unanswered.push(batch);
      }
    });
    await new Promise((r) => setTimeout(r, 1_500));
    first.child.kill('SIGKILL');
    killed = true;
    await Promise.all(clients);
    expect(acknowledged.size).toBeGreaterThan(100);

    // Restart on the same data; the clients retry what got no answer (the same uuids), as SDKs do.
    const second = await start();
    for (const batch of unanswered) expect(await send(second.url, batch)).toBe(true);
    for (const batch of unanswered) for (const u of batch) acknowledged.add(u);

    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    const { rows } = await client.query<{ uuid: string; n: string }>(
      "SELECT data->>'uuid' AS uuid, count(*) AS n FROM event_log WHERE type = 'EventCaptured' GROUP BY 1",
    );
    await client.end();
    const counts = new Map(rows.map((r) => [r.uuid, Number(r.n)]));
    const missing = [...acknowledged].filter((u) => !counts.has(u));
    const duplicated = [...counts].filter(([, n]) => n > 1);
    console.log(
      `kill -9 under load: ${acknowledged.size} acknowledged (${unanswered.length} batches retried), ${missing.length} lost, ${duplicated.length} duplicated`,
    );
    expect(missing).toEqual([]);
    expect(duplicated).toEqual([]);
  }, 180_000);
});
