import { type ChildProcess, spawn } from 'node:child_process';
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
