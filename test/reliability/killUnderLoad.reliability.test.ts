import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type ServerProcess,
  startServerProcess,
  stopServerProcess,
} from '../support/serverProcess.ts';
import { createTestDatabase } from '../support/testDatabase.ts';

/**
 * `kill -9` of the server while clients capture: after a restart, every event the server
 * acknowledged (200) is in the log exactly once, including those whose clients retried.
 */
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-kill-'));
const KEY = 'phc_kill_project_key_0001';
const servers: ServerProcess[] = [];
let databaseUrl: string;

afterAll(async () => {
  for (const s of servers) await stopServerProcess(s, 'SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const start = async () => {
  const server = await startServerProcess({
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    INIT_PROJECT_API_KEY: KEY,
    LOG_LEVEL: 'error',
  });
  servers.push(server);
  return server;
};

/** One /batch/ of `uuids`; true when acknowledged, false on any other answer or a dropped connection. */
const send = async (url: string, uuids: readonly string[]) => {
  try {
    const res = await fetch(`${url}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        api_key: KEY,
        batch: uuids.map((uuid, i) => ({ event: 'load', distinct_id: `kill-${i % 7}`, uuid })),
      }),
      signal: AbortSignal.timeout(5_000),
    });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
};

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
