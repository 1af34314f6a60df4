import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repositoryRoot } from '../support/serverProcess.ts';
import { createTestDatabase } from '../support/testDatabase.ts';

// Issue #25: an orchestrator that waits for /_readyz and then uses INIT_PERSONAL_API_KEY must never
// get a 401. The server binds its port before it creates the default project and keys, so
// readiness has to wait for that bootstrap.
const PERSONAL_KEY = 'phx_ready_means_keys_01';

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

/** Starts the server on a fresh database and data dir; polls /_readyz every 2 ms; on the first 200 calls /api. */
async function firstCallAfterReady(): Promise<{ status: number; output: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-ready-'));
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: repositoryRoot,
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: dataDir,
      // a fresh database on the suite's Postgres: an empty data dir without initdb's seconds
      DATABASE_URL: await createTestDatabase(),
      EVENTSTORE_URL: '',
      CLICKHOUSE_URL: '',
      CHDB_PATH: path.join(dataDir, 'chdb'),
      INIT_PROJECT_API_KEY: 'phc_ready_means_keys_01',
      INIT_PERSONAL_API_KEY: PERSONAL_KEY,
    },
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  const base = `http://127.0.0.1:${port}`;
  try {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`server exited:\n${output}`);
      const ready = await fetch(`${base}/_readyz`)
        .then(async (r) => {
          await r.arrayBuffer();
          return r.status;
        })
        .catch(() => 0);
      if (ready === 200) {
        const res = await fetch(`${base}/api/projects/`, {
          headers: { authorization: `Bearer ${PERSONAL_KEY}` },
        });
        await res.arrayBuffer();
        return { status: res.status, output };
      }
      await new Promise((r) => setTimeout(r, 2));
    }
    throw new Error(`never ready:\n${output}`);
  } finally {
    child.kill('SIGTERM');
    await exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('/_readyz on a first start', () => {
  it('answers 200 only once the init personal key works', async () => {
    // Three fresh starts: the race it guards against was lost three times out of three.
    for (let start = 0; start < 3; start++) {
      const { status, output } = await firstCallAfterReady();
      expect(status, `start ${start + 1}: GET /api/projects/ on the first 200\n${output}`).toBe(
        200,
      );
    }
  }, 120_000);
});
