import fs from 'node:fs';

/** CPU seconds from /proc (Linux): a process (all threads), its main thread, and the machine. */
const TICK = 100; // USER_HZ on Linux

const ticksOf = (statFile: string, withExitedChildren = false) => {
  try {
    const stat = fs.readFileSync(statFile, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const own = Number(fields[11]) + Number(fields[12]); // utime + stime
    // cutime + cstime: children it waited for (Postgres' backends of closed connections)
    return withExitedChildren ? own + Number(fields[13]) + Number(fields[14]) : own;
  } catch {
    return Number.NaN;
  }
};

/** CPU seconds of one process (all threads), NaN once it has gone. */
export const processCpu = (pid: number | undefined): number =>
  pid ? ticksOf(`/proc/${pid}/stat`) / TICK : Number.NaN;

export type CpuSample = { process: number; mainThread: number; machineBusy: number; at: number };

export function sampleCpu(pid: number | undefined): CpuSample {
  const cpu = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1);
  const [user, nice, system, , , irq, softirq, steal] = cpu.map(Number) as number[];
  return {
    process: processCpu(pid),
    mainThread: pid ? ticksOf(`/proc/${pid}/task/${pid}/stat`) / TICK : Number.NaN,
    machineBusy: (user! + nice! + system! + irq! + softirq! + steal!) / TICK,
    at: performance.now() / 1000,
  };
}

/** CPU used between two samples, per request (µs), and the machine's busy cores. */
export function cpuBetween(a: CpuSample, b: CpuSample, requests: number) {
  const per = (s: number) => (requests > 0 ? Math.round((s * 1e6) / requests) : Number.NaN);
  return {
    processUsPerRequest: per(b.process - a.process),
    mainThreadUsPerRequest: per(b.mainThread - a.mainThread),
    machineUsPerRequest: per(b.machineBusy - a.machineBusy),
    machineBusyCores: Number(((b.machineBusy - a.machineBusy) / (b.at - a.at)).toFixed(2)),
  };
}

/**
 * CPU seconds of a process's descendants (the embedded Postgres a server started, …), including
 * the children they waited for (a Postgres backend of a connection closed meanwhile).
 */
export function descendantsCpu(pid: number | undefined): number {
  if (!pid) return Number.NaN;
  const parent = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(entry), Number(fields[1]));
    } catch {
      // the process ended meanwhile
    }
  }
  const isDescendant = (p: number): boolean => {
    for (let q = parent.get(p); q !== undefined && q > 1; q = parent.get(q))
      if (q === pid) return true;
    return false;
  };
  let total = 0;
  for (const p of parent.keys())
    if (p !== pid && isDescendant(p)) total += ticksOf(`/proc/${p}/stat`, true) / TICK || 0;
  return total;
}
