import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TOKEN } from './captureBodies.ts';
import { closedLoad, type LoadResult } from './closedLoad.ts';
import { embeddedPostgresClient, serverEntry, startProcess } from './processes.ts';
import { type CpuPerEvent, cpuPerEvent, sampleThreads } from './threadCpu.ts';

/** One load phase of bench/capture: where it posts what, on how many connections. */
export type Phase = {
  name: string;
  path: '/batch/' | '/capture/';
  body: string | readonly Buffer[];
  events: number;
  connections: number;
  headers?: Record<string, string>;
};
/** fromUs/toUs: the load's window on the monotonic clock (µs), as V8's profiles time samples */
export type MeasuredPhase = { r: LoadResult; cpu: CpuPerEvent; fromUs: number; toUs: number };

export const loadPhase = (url: string, p: Phase, seconds: number) =>
  closedLoad(`${url}${p.path}`, p.body, {
    seconds,
    connections: p.connections,
    ...(p.headers ? { headers: p.headers } : {}),
  });
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

/** One phase: a 2-s warm-up (JIT, caches), `beforeLoad`, then the load, with CPU by thread. */
export async function measureLoadPhase(
  url: string,
  pid: number | undefined,
  p: Phase,
  seconds: number,
  beforeLoad?: () => Promise<unknown>,
): Promise<MeasuredPhase> {
  await loadPhase(url, p, 2);
  await beforeLoad?.();
  const before = sampleThreads(pid);
  const fromUs = monotonicUs();
  const r = await loadPhase(url, p, seconds);
  const toUs = monotonicUs();
  return { r, cpu: cpuPerEvent(before, sampleThreads(pid), r.total * p.events), fromUs, toUs };
}

/** Starts our server on a fresh data directory, runs `work`, stops it and removes the directory. */
export async function withServer<T>(
  nodeArgs: string[],
  work: (s: {
    url: string;
    pid: number | undefined;
    db: Awaited<ReturnType<typeof embeddedPostgresClient>>;
  }) => Promise<T>,
) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-bench-'));
  const env = {
    DATA_DIR: dataDir,
    PORT: '0',
    INIT_PROJECT_API_KEY: TOKEN,
    INIT_PERSONAL_API_KEY: 'phx_bench_personal_key',
    LOG_LEVEL: 'warn',
  };
  const server = await startProcess(serverEntry(), env, nodeArgs);
  const db = await embeddedPostgresClient(dataDir);
  try {
    return await work({ url: server.url, pid: server.child.pid, db });
  } finally {
    await db.end();
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
