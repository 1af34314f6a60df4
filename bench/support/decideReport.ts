/** bench/decide's report: each target's median round, and the ratios per round and their medians. */
import type { cpuBetween } from './cpu.ts';
import type { OpenLoopResult } from './openLoop.ts';
import type { Started } from './processes.ts';

export type Req = { method: string; path: string; headers: Record<string, string>; body?: string };
/** One thing measured: a server and the requests it gets. */
export type Target = {
  key: string;
  name: string;
  url: string;
  pid?: number;
  make: (i: number) => Req;
};
/** A target served by a process the bench started (its CPU is sampled by pid). */
export const targetOn = (
  server: Started,
  key: string,
  name: string,
  make: (i: number) => Req,
): Target => ({ key, name, url: server.url, pid: server.child.pid!, make });

export type Phase = {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  total: number;
  /** CPU per request during the phase: the server process (all threads), its main thread, the machine */
  cpu?: ReturnType<typeof cpuBetween>;
};
/** A target's peak (closed loop) and the latency at half that rate (open loop). */
export type Measured = { peak: Phase; half: OpenLoopResult };

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
export const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
/** the round whose peak is the median one (the lower middle of an even count) */
const medianRound = (runs: readonly Measured[]) =>
  [...runs].sort((a, b) => a.peak.rps - b.peak.rps)[Math.floor((runs.length - 1) / 2)]!;

export function printReport(
  targets: readonly Target[],
  runs: ReadonlyMap<string, readonly Measured[]>,
  methodFloor: OpenLoopResult | undefined,
) {
  const rounds = Math.max(...[...runs.values()].map((r) => r.length));
  const several = rounds > 1;
  console.log(
    `| target | req/s | p50 ms | p99 ms | non-2xx | at half the peak rate: req/s, p50, p99 ms | server CPU µs/req (main thread) | machine busy cores |${several ? ' req/s of every round |' : ''}`,
  );
  console.log(`|---|---|---|---|---|---|---|---|${several ? '---|' : ''}`);
  for (const t of targets) {
    const all = runs.get(t.key)!;
    const r = medianRound(all);
    const every = several ? ` ${all.map((x) => fmt(x.peak.rps)).join(', ')} |` : '';
    console.log(
      `| ${t.name} | ${fmt(r.peak.rps)} | ${r.peak.p50} | ${r.peak.p99} | ${r.peak.non2xx + r.peak.errors} | ${fmt(r.half.rps)}, ${r.half.p50}, ${r.half.p99} | ${r.peak.cpu?.processUsPerRequest} (${r.peak.cpu?.mainThreadUsPerRequest}) | ${r.peak.cpu?.machineBusyCores} |${every}`,
    );
  }
  const rps = (key: string) => runs.get(key)?.map((r) => r.peak.rps);
  const show = (a: string, b: string, label: string, unit: (v: number) => string, goal = '') => {
    const [x, y] = [rps(a), rps(b)];
    if (!x || !y) return;
    const each = x.map((v, i) => v / y[i]!);
    const rounds = several ? ` (rounds: ${each.map(unit).join(', ')})` : '';
    console.log(`${label} = ${unit(median(each))}${rounds}${goal}`);
  };
  const times = (v: number) => `${v.toFixed(1)}×`;
  const pct = (v: number) => `${(v * 100).toFixed(1)} %`;
  console.log('');
  show('v3', 'unleash', '/decide / unleash', times, ' (target ≥ 10×)');
  show('v3', 'bare', '/decide / bare', pct, ' (target ≥ 30 %)');
  show('floor', 'unleash', 'floor (evaluator) / unleash', times);
  show('hashes', 'unleash', 'floor (SHA-1s only) / unleash', times);
  show('v3', 'floor', '/decide / floor (evaluator)', pct);
  show('v3', 'hashes', '/decide / floor (SHA-1s only)', pct);
  if (methodFloor)
    console.log(
      `latency floor of the method (hello world, open loop, 2,000 req/s): p50 ${methodFloor.p50} ms, p99 ${methodFloor.p99} ms`,
    );
  const v3 = runs.get('v3');
  if (v3) {
    const p99s = v3.map((r) => r.half.p99);
    const each = several ? ` (rounds: ${p99s.join(', ')})` : '';
    console.log(`/decide p99 at half its peak: ${median(p99s)} ms${each} (target < 5 ms)`);
  }
}
