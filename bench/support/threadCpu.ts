import fs from 'node:fs';
import { descendantsCpu, processCpu } from './cpu.ts';

/**
 * CPU seconds of the server by thread, from /proc/<pid>/task/<tid>/stat (Linux), grouped: its
 * main thread; Node's other threads (Node 20 names V8's GC helpers, libuv's pool and worker
 * threads alike "node"; the profiler's "v8:…"); chDB's threads by the name they had last (its
 * pool threads rename themselves for each job — ThreadPool, QueryPipelineEx, MergeMutate… — so
 * differences are taken thread by thread, never name by name); threads that ended between two
 * samples; and the server's descendants (the embedded Postgres with the backends it waited for).
 */
export type ThreadSample = {
  threads: Map<string, { name: string; seconds: number }>;
  process: number;
  postgres: number;
};

const TICK = 100; // USER_HZ

export function sampleThreads(pid: number | undefined): ThreadSample {
  const threads = new Map<string, { name: string; seconds: number }>();
  if (!pid) return { threads, process: Number.NaN, postgres: Number.NaN };
  let tids: string[] = [];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    // the server has gone
  }
  for (const tid of tids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const seconds = (Number(fields[11]) + Number(fields[12])) / TICK;
      threads.set(tid, { name: tid === String(pid) ? 'main thread' : comm, seconds });
    } catch {
      // the thread ended meanwhile
    }
  }
  return { threads, process: processCpu(pid), postgres: descendantsCpu(pid) };
}

export const NODE_THREADS = "Node's other threads";
const isNodeThread = (comm: string) => comm === 'node' || /^(v8:|libuv|V8 )/.test(comm);
/** chDB numbers some threads ("Merge3"): one group a pool */
const chdbGroup = (comm: string) => `chDB ${comm.replace(/[\d/ ]+$/, '') || comm}`;

/**
 * µs of CPU an event by group between two samples, largest first, with "all processes together"
 * (the server with its threads and Postgres; the load generator and the ceilings are other
 * processes and are not in it). chDB groups under 0.5 µs an event are folded into "chDB, other".
 */
export function cpuPerEvent(before: ThreadSample, after: ThreadSample, events: number) {
  const seconds = new Map<string, number>();
  const add = (group: string, s: number) => seconds.set(group, (seconds.get(group) ?? 0) + s);
  let live = 0;
  for (const [tid, t] of after.threads) {
    const s = t.seconds - (before.threads.get(tid)?.seconds ?? 0);
    live += s;
    add(
      t.name === 'main thread' ? t.name : isNodeThread(t.name) ? NODE_THREADS : chdbGroup(t.name),
      s,
    );
  }
  // what the process used beyond its live threads: threads that ended meanwhile
  add('ended threads', after.process - before.process - live);
  add('Postgres', after.postgres - before.postgres);
  const rows: { name: string; us: number }[] = [];
  let smallChdb = 0;
  for (const [name, s] of seconds) {
    const us = (s * 1e6) / events;
    if (!Number.isFinite(us)) continue;
    if (name.startsWith('chDB ') && us < 0.5) smallChdb += us;
    // (ended threads: /proc's process total and its threads' sums round apart by a tick or two)
    else if (name !== 'ended threads' || us >= 0.5) rows.push({ name, us });
  }
  if (smallChdb >= 0.05) rows.push({ name: 'chDB, other', us: smallChdb });
  rows.sort((a, b) => b.us - a.us);
  return { rows, total: rows.reduce((n, r) => n + r.us, 0) };
}

export type CpuPerEvent = ReturnType<typeof cpuPerEvent>;

export const cpuOf = (c: CpuPerEvent, name: string) => c.rows.find((r) => r.name === name)?.us ?? 0;

/** "main thread 120.0, Postgres 80.0, …; all processes 260.0" */
export const describeCpu = (c: CpuPerEvent) =>
  `${c.rows.map((r) => `${r.name} ${r.us.toFixed(1)}`).join(', ')}; all processes ${c.total.toFixed(1)}`;
