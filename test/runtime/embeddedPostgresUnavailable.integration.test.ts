import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../src/runtime/embeddedPostgres.ts';
import { repositoryRoot } from '../support/serverProcess.ts';

// Issue #25: when the embedded Postgres cannot run, `npm start` stops with one line that names
// the cause and the fix (exit code 1), never an unhandled 'error' event and its stack.
const isRoot = process.getuid?.() === 0;

/** `npm start` on `dataDir` with no database server configured; resolves with the exit code and output. */
function startOn(dataDir: string): Promise<{ code: number | null; lines: string[] }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: repositoryRoot,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      EVENTSTORE_URL: '',
      CLICKHOUSE_URL: '',
      PORT: '0',
    },
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, lines: out.split('\n').filter((l) => l.trim() !== '') });
    }),
  );
}

describe('embedded Postgres that cannot run', () => {
  it.skipIf(!isRoot)(
    'started by root in a directory the postgres user cannot enter: one line naming it and the fix (needs root: only then does embedded Postgres run as the user "postgres")',
    async () => {
      // what `git clone … $(mktemp -d)/c` gives: a parent directory of mode 0700
      const closed = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-closed-'));
      try {
        expect(fs.statSync(closed).mode & 0o777).toBe(0o700);
        const { code, lines } = await startOn(path.join(closed, 'data'));
        expect(lines).toEqual([
          `failed to start: embedded Postgres runs as user "postgres" when started by root, and that user cannot enter ${closed} (mode 0700, owner uid 0) on the way to its data directory ${path.join(closed, 'data', 'postgres')}: set DATA_DIR to a directory that user can reach, or \`chmod o+x ${closed}\`, or start as a user other than root, or set DATABASE_URL to a Postgres server`,
        ]);
        expect(code).toBe(1);
      } finally {
        fs.rmSync(closed, { recursive: true, force: true });
      }
    },
    90_000,
  );

  it('a data directory that cannot be created: one line naming it and the fix', async () => {
    // a path under a regular file cannot be a directory, whoever runs it (root included)
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-not-a-dir-'));
    const file = path.join(dir, 'file');
    fs.writeFileSync(file, '');
    try {
      const { code, lines } = await startOn(path.join(file, 'data'));
      expect(lines).toEqual([
        `failed to start: the data directory ${path.join(file, 'data')} cannot be created or written (ENOTDIR): set DATA_DIR to a directory this user can write, or give it write access to this one`,
      ]);
      expect(code).toBe(1);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('a port taken before Postgres binds it: starts on another one, and we reach our own', async () => {
    const blocker = net.createServer((socket) => socket.destroy());
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const taken = (blocker.address() as net.AddressInfo).port;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-port-taken-'));
    const embedded = await startEmbeddedPostgres(dataDir, 'postgres', { port: taken });
    try {
      expect(new URL(embedded.connectionString).port).not.toBe(String(taken));
      const client = new pg.Client({ connectionString: embedded.connectionString });
      await client.connect();
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      await client.end();
    } finally {
      await embedded.stop();
      blocker.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});
