import fs from 'node:fs';

/** CPU seconds from /proc (Linux): a process (all threads), its main thread, and the machine. */
const TICK = 100; // USER_HZ on Linux

const ticksOf = (statFile: string) => {
  try {
    const stat = fs.readFileSync(statFile, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime + stime
  } catch {
    return Number.NaN;
  }
};

export type CpuSample = { process: number; mainThread: number; machineBusy: number; at: number };

export function sampleCpu(pid: number | undefined): CpuSample {
  const cpu = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1);
  const [user, nice, system, , , irq, softirq, steal] = cpu.map(Number) as number[];
  return {
    process: pid ? ticksOf(`/proc/${pid}/stat`) / TICK : Number.NaN,
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
