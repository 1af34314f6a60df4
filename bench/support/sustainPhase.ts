import type pg from 'pg';
import { closedLoad } from './closedLoad.ts';
import { openLoop } from './openLoop.ts';
import {
  describeLag,
  type LagSummary,
  type ReadModelIds,
  startLagSampler,
  waitCaughtUp,
} from './readModelLag.ts';

export type SustainResult = {
  rate: number;
  seconds: number;
  /** events due after the generator's warm-up second, acknowledged (200), answered otherwise */
  offered: number;
  acknowledged: number;
  failed: number;
  p50: number;
  p99: number;
  lag: LagSummary;
  /** caught up after the offered load stopped, s */
  catchUp: number;
};

export type BurstResult = {
  seconds: number;
  acknowledged: number;
  non2xx: number;
  /** until both read models have every event of the burst, from its end, s */
  drain: number;
};

type Target = {
  url: string;
  db: pg.Client;
  ids: ReadModelIds;
  types: string[];
  bodies: readonly Buffer[];
  eventsPerBody: number;
  headers: Record<string, string>;
};

/**
 * Open-loop `/batch` load at `rate` events/s for `seconds` (bench/support/openLoop.ts: requests
 * evenly spaced on up to `sockets` keep-alive connections, what was never sent by the end counts
 * as offered and not acknowledged), with both read models' lag and backlog sampled every 50 ms.
 */
export async function sustain(
  t: Target,
  rate: number,
  seconds: number,
  sockets = 50,
): Promise<SustainResult> {
  await waitCaughtUp(t.db, t.ids, t.types);
  const requests = t.bodies.map((b) => ({
    method: 'POST',
    path: '/batch/',
    headers: { 'content-type': 'application/json', ...t.headers },
    body: b.toString(),
  }));
  const sampler = startLagSampler(t.db, t.ids, t.types, 50);
  const r = await openLoop(
    t.url,
    (i) => requests[i % requests.length]!,
    rate / t.eventsPerBody,
    seconds,
    sockets,
    1_000,
    { stopOffering: true },
  );
  const lag = await sampler.stop();
  const catchUp = await waitCaughtUp(t.db, t.ids, t.types);
  return {
    rate,
    seconds,
    offered: r.offered * t.eventsPerBody,
    acknowledged: r.ok * t.eventsPerBody,
    failed: r.failed * t.eventsPerBody,
    p50: r.p50,
    p99: r.p99,
    lag,
    catchUp,
  };
}

/** A saturating closed-loop burst (10 connections) and the time both read models take after it. */
export async function burst(t: Target, seconds: number, connections = 10): Promise<BurstResult> {
  await waitCaughtUp(t.db, t.ids, t.types);
  const r = await closedLoad(`${t.url}/batch/`, t.bodies, {
    seconds,
    connections,
    headers: t.headers,
  });
  const drain = await waitCaughtUp(t.db, t.ids, t.types);
  return {
    seconds,
    acknowledged: (r.total - r.non2xx) * t.eventsPerBody,
    non2xx: r.non2xx + r.errors,
    drain,
  };
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

export const describeSustain = (s: SustainResult) =>
  `sustained posthog-js-like /batch, ${fmt(s.rate)} events/s offered for ${s.seconds} s (open loop, 50 sockets): ${fmt(s.acknowledged)} of ${fmt(s.offered)} acknowledged, ${fmt(s.failed)} answered otherwise; request p50 ${s.p50} ms, p99 ${s.p99} ms; lag ${describeLag(s.lag)}; caught up ${s.catchUp.toFixed(1)} s after`;

export const describeBurst = (b: BurstResult) =>
  `saturating burst, ${b.seconds} s closed loop (10 connections): ${fmt(b.acknowledged)} events acknowledged (${fmt(b.acknowledged / b.seconds)}/s), ${b.non2xx} non-2xx; both read models caught up ${b.drain.toFixed(1)} s after its end`;
