import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';

export const root = path.resolve(import.meta.dirname, '../..');

export type Started = { child: ChildProcess; url: string; stop: () => Promise<void> };

/** Starts a TypeScript entry point in its own process and waits for "listening on <url>". */
export async function startProcess(
  entry: string,
  env: Record<string, string>,
  nodeArgs: readonly string[] = [],
): Promise<Started> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', entry], {
    cwd: root,
    env: { ...process.env, ...env },
  });
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
