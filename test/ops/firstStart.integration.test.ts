import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Issue #12: a first start that cannot bind its port creates nothing, so the next start still
// creates the default project and shows its keys (only their hashes are stored).
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const started: ReturnType<typeof spawn>[] = [];

/** A step that hangs fails with what the server printed, instead of timing the whole test out. */
const within = <T>(p: Promise<T>, why: () => string, ms = 40_000): Promise<T> =>
  Promise.race([
    p,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(why())), ms).unref()),
  ]);

function start(env: Record<string, string>, untilOutput: RegExp) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', HOST: '127.0.0.1', ...env },
  });
  started.push(child);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const seen = new Promise<void>((resolve) => {
    const check = () => untilOutput.test(out) && resolve();
    child.stdout.on('data', check);
    child.stderr.on('data', check);
  });
  return { child, exited, seen, output: () => out };
}

describe('first start', () => {
  it('shows the keys on the first start that binds its port, not on one that failed', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-first-start-'));
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = String((blocker.address() as net.AddressInfo).port);
    try {
      const failed = start({ DATA_DIR: dataDir, PORT: port }, /failed to start/);
      expect(await within(failed.exited, failed.output), failed.output()).toBe(1);
      expect(failed.output()).toMatch(/failed to start/);
      expect(failed.output()).not.toMatch(/Created "Default project"/);
      // The listening socket closes at once (close's callback would also wait for connections
      // someone else may hold to this port); the next starts take any free port anyway.
      blocker.close();

      const next = start({ DATA_DIR: dataDir, PORT: '0' }, /listening on/);
      await within(Promise.race([next.seen, next.exited]), next.output);
      expect(next.output()).toMatch(/Created "Default project" \(id \d+\)/);
      expect(next.output()).toMatch(/project API key \(for capture\): phc_\S+/);
      expect(next.output()).toMatch(/personal API key \(for \/api, all scopes\): phx_\S+/);
      next.child.kill('SIGTERM');
      expect(await within(next.exited, next.output)).toBe(0);

      const third = start({ DATA_DIR: dataDir, PORT: '0' }, /listening on/);
      await within(Promise.race([third.seen, third.exited]), third.output);
      expect(third.output()).not.toMatch(/Created "Default project"/);
      third.child.kill('SIGTERM');
      await within(third.exited, third.output);
    } finally {
      // a failure must not leave a server behind
      for (const c of started) if (c.exitCode === null) c.kill('SIGTERM');
      blocker.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
