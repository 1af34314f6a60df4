import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const repositoryRoot = path.resolve(import.meta.dirname, '../..');

export type ServerProcess = { child: ChildProcess; url: string; output: () => string };

/** `npm start` as a user runs it (tsx on src/main.ts), with `env` (DATA_DIR, …); resolves once it listens. */
export async function startServerProcess(
  env: Record<string, string>,
  nodeArgs: readonly string[] = [],
): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...nodeArgs, 'src/main.ts'], {
    cwd: repositoryRoot,
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      DATABASE_URL: '',
      EVENTSTORE_URL: '',
      CLICKHOUSE_URL: '',
      PORT: '0',
      ...env,
    },
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 60_000);
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', check);
    child.on('exit', () => reject(new Error(`server exited:\n${out}`)));
  });
  return { child, url, output: () => out };
}

/** Sends `signal` and resolves with the exit code. */
export const stopServerProcess = (s: ServerProcess, signal: NodeJS.Signals = 'SIGTERM') =>
  new Promise<number | null>((resolve) => {
    if (s.child.exitCode !== null || s.child.signalCode !== null) return resolve(s.child.exitCode);
    s.child.on('exit', (code) => resolve(code));
    s.child.kill(signal);
  });

/**
 * Servers started one after another on one data directory (a kill, then a restart): `start` adds
 * one with `env`; `cleanUp` kills every one still running and removes the directory.
 */
export function serversOnOneDataDir(prefix: string) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const servers: ServerProcess[] = [];
  return {
    async start(env: Record<string, string>): Promise<ServerProcess> {
      const server = await startServerProcess({ DATA_DIR: dataDir, ...env });
      servers.push(server);
      return server;
    },
    async cleanUp(): Promise<void> {
      for (const s of servers) await stopServerProcess(s, 'SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** One /batch/ with `apiKey`; true when acknowledged, false on any other answer or a dropped connection. */
export async function sendBatch(
  url: string,
  apiKey: string,
  batch: readonly Record<string, unknown>[],
): Promise<boolean> {
  try {
    const res = await fetch(`${url}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: apiKey, batch }),
      signal: AbortSignal.timeout(5_000),
    });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}
