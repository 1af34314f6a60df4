import { STAGES, type Stage, type StageTotals } from './profileStages.ts';
import type { BurstResult, SustainResult } from './sustainPhase.ts';
import { type CpuPerEvent, cpuOf, NODE_THREADS } from './threadCpu.ts';

/**
 * bench/capture's closing tables: the stage table (the profile's JS stages with the threads and
 * processes a JS profile cannot see beside them, so that it adds up to all processes) and issue
 * #27's targets, each with the value measured in this run and whether it is met.
 */

export type StageCpu = { stage: string; us: number }[];

/**
 * CPU an event by stage: the profile's samples are wall time (a thread waiting for a core is
 * sampled too), so they give each stage's share of the busy samples, applied to the CPU /proc
 * measured for the JS threads — the main thread, plus Node's other threads when worker threads
 * have busy samples of their own (Node 20 does not tell worker threads from V8's in /proc).
 * Beside them, the threads and processes a JS profile does not see, so that the table adds up
 * to all processes.
 */
export function stageCpu(totals: StageTotals, cpu: CpuPerEvent): StageCpu {
  const busy = STAGES.filter((s) => s !== 'idle').reduce((n, s) => n + totals.us.get(s)!, 0);
  const withWorkers = totals.workerBusyUs > 0.01 * busy;
  const jsCpu = cpuOf(cpu, 'main thread') + (withWorkers ? cpuOf(cpu, NODE_THREADS) : 0);
  const rows: StageCpu = STAGES.filter((s) => s !== 'idle').map((s) => ({
    stage: s,
    us: busy > 0 ? (jsCpu * totals.us.get(s)!) / busy : 0,
  }));
  for (const r of cpu.rows) {
    if (r.name === 'main thread' || (withWorkers && r.name === NODE_THREADS)) continue;
    rows.push({
      stage: r.name === 'Postgres' ? 'Postgres (all of its processes)' : r.name,
      us: r.us,
    });
  }
  return rows;
}

export function describeStageCpu(rows: StageCpu, cpu: CpuPerEvent): string[] {
  return [
    '| stage | µs/event |',
    '|---|---|',
    ...rows.map((r) => `| ${r.stage} | ${r.us.toFixed(1)} |`),
    `| all together | ${rows.reduce((n, r) => n + r.us, 0).toFixed(1)} |`,
    '',
    `(the JS stages are the profile's shares of the JS threads' CPU by /proc; /proc, all processes: ${cpu.total.toFixed(1)})`,
  ];
}

type Limit = { stage: Stage; max: number };
const STAGE_LIMITS: Limit[] = [
  { stage: 'receive and parse', max: 15 },
  { stage: 'normalise and enrich', max: 10 },
  { stage: 'durable append', max: 20 },
  { stage: 'ClickHouse insert', max: 20 },
  { stage: 'persons', max: 15 },
  { stage: 'the rest', max: 10 },
];

export type TargetInputs = {
  jsBatch?: { ratio: number; cpu: CpuPerEvent };
  lightBatchRatio?: number;
  singles: { name: string; ratio: number }[];
  sustain?: SustainResult;
  burst?: BurstResult;
  stages?: StageCpu;
};

const yes = (ok: boolean) => (ok ? 'met' : '**not met**');
const f1 = (n: number) => n.toFixed(1);

export function describeTargets(t: TargetInputs, rate: number): string[] {
  const rows: string[] = [];
  const row = (target: string, value: string, ok: boolean) =>
    rows.push(`| ${target} | ${value} | ${yes(ok)} |`);
  if (t.jsBatch)
    row(
      'CPU per posthog-js-like event, all processes, at saturation ≤ 90 µs',
      `${f1(t.jsBatch.cpu.total)} µs`,
      t.jsBatch.cpu.total <= 90,
    );
  if (t.stages) {
    const at = (name: string) => t.stages!.find((r) => r.stage === name)?.us ?? 0;
    const chdb = t.stages.filter((r) => r.stage.startsWith('chDB ')).reduce((n, r) => n + r.us, 0);
    const node = at(NODE_THREADS) + at('ended threads');
    const postgres = at('Postgres (all of its processes)');
    for (const { stage, max } of STAGE_LIMITS) {
      let us = at(stage);
      let how = 'JS';
      if (stage === 'ClickHouse insert') [us, how] = [us + chdb, 'JS + chDB threads'];
      if (stage === 'the rest')
        [us, how] = [us + at('GC') + node, "JS + GC + Node's other threads"];
      if (stage === 'durable append' || stage === 'persons')
        how = `JS only; Postgres ${f1(postgres)} beside, not split`;
      row(`… ${stage} ≤ ${max} µs`, `${f1(us)} µs (${how})`, us <= max);
    }
  }
  if (t.jsBatch)
    row(
      '`/batch` posthog-js-like, 10 connections ≥ 0.30 of parse-only',
      t.jsBatch.ratio.toFixed(3),
      t.jsBatch.ratio >= 0.3,
    );
  if (t.lightBatchRatio !== undefined && t.jsBatch)
    row(
      '… light events at least as good',
      t.lightBatchRatio.toFixed(3),
      t.lightBatchRatio >= t.jsBatch.ratio,
    );
  if (t.sustain) {
    const s = t.sustain;
    row(
      `sustained ${rate.toLocaleString('en-US')} events/s for ${s.seconds} s: all acknowledged`,
      `${s.acknowledged.toLocaleString('en-US')} of ${s.offered.toLocaleString('en-US')} (${s.failed} answered otherwise)`,
      s.acknowledged === s.offered,
    );
    row('… persons lag p99 < 2 s', `${s.lag.persons.p99.toFixed(0)} ms`, s.lag.persons.p99 < 2000);
    row(
      '… ClickHouse lag p99 < 2 s',
      `${s.lag.clickhouse.p99.toFixed(0)} ms`,
      s.lag.clickhouse.p99 < 2000,
    );
    // bounded: not growing — the last tenth's largest backlog within 1.25 × the first half's
    // (plus 0.1 s of the offered rate, so that two near-empty backlogs compare as equal)
    const bounded = s.lag.backlogEnd <= 1.25 * s.lag.backlogFirstHalf + rate * 0.1;
    row(
      '… backlog bounded (not growing: last tenth ≤ 1.25 × first half)',
      `first half ${s.lag.backlogFirstHalf.toLocaleString('en-US')}, last tenth ${s.lag.backlogEnd.toLocaleString('en-US')} positions`,
      bounded,
    );
  }
  if (t.burst)
    row(
      `${t.burst.seconds} s saturating burst drains within 30 s`,
      `${f1(t.burst.drain)} s`,
      t.burst.drain <= 30,
    );
  for (const s of t.singles)
    row(
      `single \`/capture\` (${s.name}), 50 connections ≥ 0.25 of hello world`,
      s.ratio.toFixed(3),
      s.ratio >= 0.25,
    );
  return ['| target (issue #27) | measured | |', '|---|---|---|', ...rows];
}
