import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';

export const root = path.resolve(import.meta.dirname, '../..');

/**
 * The server the benches start: the compiled JavaScript production runs (`npm run build`, run here
 * first so it is never stale), or with BENCH_SERVER=tsx the TypeScript sources through tsx.
 */
export function serverEntry(): string {
  if (process.env.BENCH_SERVER === 'tsx') return 'src/main.ts';
  if (!built) execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
  built = true;
  return 'dist/src/main.js';
}
let built = false;

export type Started = { child: ChildProcess; url: string; stop: () => Promise<void> };

/**
 * Starts an entry point in its own process and waits for "listening on <url>": TypeScript through
 * tsx, compiled JavaScript (`dist/…`, `npm run build`) directly.
 */
export async function startProcess(
  entry: string,
  env: Record<string, string>,
  nodeArgs: readonly string[] = [],
): Promise<Started> {
  const args = [...nodeArgs, ...(entry.endsWith('.ts') ? ['--import', 'tsx'] : []), entry];
  // BENCH_SERVER_CPUS=0 pins the servers (and the databases they start) to those CPUs; run the
  // bench itself under `taskset -c 1` so the load generator does not take their cores.
  const cpus = process.env.BENCH_SERVER_CPUS;
  const child = spawn(
    cpus ? 'taskset' : process.execPath,
    cpus ? ['-c', cpus, process.execPath, ...args] : args,
    {
      cwd: root,
      env: { ...process.env, ...env },
    },
  );
  let out = '';
  // BENCH_SERVER_OUTPUT=1 shows what the servers print (with --trace-gc, for example)
  if (process.env.BENCH_SERVER_OUTPUT) child.stdout!.pipe(process.stderr);
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${entry} did not start:\n${out}`)), 120_000);
    child.stdout!.on('data', () => {
      const m = /listening on (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on('exit', (code) => reject(new Error(`${entry} exited with ${code}:\n${out}`)));
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.on('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return { child, url, stop };
}

/** Connects to the embedded Postgres a running server started under dataDir (as the CLI does). */
export async function embeddedPostgresClient(dataDir: string): Promise<pg.Client> {
  const creds = JSON.parse(
    fs.readFileSync(path.join(dataDir, 'postgres-credentials.json'), 'utf8'),
  ) as { user: string; password: string };
  const port = Number(
    fs.readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[3],
  );
  const client = new pg.Client({
    host: '127.0.0.1',
    port,
    user: creds.user,
    password: creds.password,
    database: 'hogstream',
  });
  await client.connect();
  return client;
}
