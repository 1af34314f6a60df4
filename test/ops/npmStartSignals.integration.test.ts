import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Issue #12: SIGTERM or SIGINT sent to the `npm start` process stops the server cleanly (npm's
// script runs the server with `exec`, so the signal reaches it instead of an intermediate shell).
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The process ids whose parent is `pid` (Linux /proc). */
const childrenOf = (pid: number): number[] =>
  fs
    .readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);

async function until(check: () => boolean, ms: number) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

describe('npm start and signals', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s to the npm process stops the server and its embedded Postgres',
    async (signal) => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-signals-'));
      const npm = spawn('npm', ['start'], {
        cwd: ROOT,
        env: {
          ...process.env,
          DATA_DIR: dataDir,
          PORT: '0',
          LOG_LEVEL: 'warn',
          INIT_PROJECT_API_KEY: 'phc_signals_test_key',
          INIT_PERSONAL_API_KEY: 'phx_signals_test_key',
        },
      });
      let out = '';
      npm.stdout.on('data', (d) => (out += d));
      npm.stderr.on('data', (d) => (out += d));
      const exited = new Promise<number | null>((r) => npm.on('exit', (code) => r(code)));
      let server: number[] = [];
      try {
        expect(await until(() => /listening on/.test(out), 60_000), out).toBe(true);
        server = childrenOf(npm.pid!);
        expect(server, 'npm runs the server itself, no shell between').toHaveLength(1);
        const postmaster = path.join(dataDir, 'postgres', 'postmaster.pid');
        expect(fs.existsSync(postmaster)).toBe(true);
        npm.kill(signal);
        await exited;
        expect(await until(() => !alive(server[0]!), 20_000), out).toBe(true);
        expect(fs.existsSync(postmaster), 'embedded Postgres stopped').toBe(false);
        expect(out).toMatch(new RegExp(`${signal} received`));
      } finally {
        if (npm.exitCode === null) npm.kill('SIGKILL');
        // a failure must not leave a server behind
        for (const pid of [...server, ...server.flatMap(childrenOf)])
          if (alive(pid)) process.kill(pid, 'SIGTERM');
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    },
    90_000,
  );
});
