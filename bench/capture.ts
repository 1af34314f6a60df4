/**
 * bench/capture: drives the embedded server from this (second) process over loopback.
 *   npm run bench:capture [-- --seconds 10 --stages]
 * Two bodies (bench/support/captureBodies.ts): light events and issue #27's posthog-js-like
 * `$pageview`s (37 properties, a `$set` of two keys, 10,000 users cycling; GeoIP on). For each,
 * /batch (100 events a request) and single /capture against a bare Fastify endpoint parsing the
 * same bodies and a bare hello world (the ceilings, same run), with CPU per event by process and
 * thread; the lag of both read models at 10,000 light events/s; a sustained open-loop phase and a
 * saturating burst with its drain; with --stages, a profiled run split into the issue's stages;
 * then the issue's targets, met or not. See docs/PERFORMANCE.md "bench/capture".
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  describeJsWorkload,
  EVENTS_PER_BATCH,
  GEO,
  jsBatchBodies,
  jsSingleBodies,
  lightBatchBody,
  lightSingleBody,
  TOKEN,
} from './support/captureBodies.ts';
import {
  loadPhase,
  type MeasuredPhase,
  measureLoadPhase,
  type Phase,
  withServer,
} from './support/capturePhase.ts';
import {
  describeStageCpu,
  describeTargets,
  stageCpu,
  type TargetInputs,
} from './support/captureTargets.ts';
import { closedLoad, type LoadResult } from './support/closedLoad.ts';
import { startProcess } from './support/processes.ts';
import { classifyProfiles, describeStages } from './support/profileStages.ts';
import {
  describeLag,
  loggedTypesSince,
  logHead,
  readModelIds,
  startLagSampler,
  waitCaughtUp,
} from './support/readModelLag.ts';
import { burst, describeBurst, describeSustain, sustain } from './support/sustainPhase.ts';
import { cpuOf, describeCpu } from './support/threadCpu.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    only: { type: 'string' },
    'raw-ack': { type: 'boolean', default: false },
    rate: { type: 'string', default: '20000' },
    'sustain-seconds': { type: 'string', default: '60' },
    'burst-seconds': { type: 'string', default: '30' },
    stages: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log(`bench/capture — capture throughput, CPU and read-model lag against issue #27's targets
usage: npm run bench:capture -- [--seconds N] [--connections N] [--only word,...] [--raw-ack]
                                [--rate N] [--sustain-seconds N] [--burst-seconds N] [--stages]
  --seconds          duration of each load phase (default 10)
  --connections      connections of the light /batch phase (default 32; posthog-js-like /batch uses 10,
                     single /capture 50, as issues #11 and #27 measure them)
  --only             run only the phases whose names contain every one of these comma-separated words
                     (light, posthog-js, batch, single); the 10,000 light events/s lag phase runs with
                     light /batch, the sustained phase and burst with posthog-js-like /batch or "sustain"
  --raw-ack          also run each phase against a prototype that acknowledges once the raw request
                     is durably in an event log (bench/support/rawAckServer.ts; issue #11)
  --rate             events/s the sustained phase offers, open loop (default 20000)
  --sustain-seconds  length of the sustained phase (default 60; 0 skips it and the burst)
  --burst-seconds    length of the saturating burst after it (default 30; 0 skips it)
  --stages           run posthog-js-like /batch once more on a server under --cpu-prof and split its
                     CPU into the issue's stages (bench/support/profileStages.ts)
env: BENCH_SERVER_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' passes node flags to our server`);
  process.exit(0);
}
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const rate = Number(values.rate);
const sustainSeconds = Number(values['sustain-seconds']);
const burstSeconds = Number(values['burst-seconds']);
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

const LIGHT_BATCH: Phase = {
  name: 'light, /batch of 100',
  path: '/batch/',
  body: lightBatchBody,
  events: EVENTS_PER_BATCH,
  connections,
};
const JS_BATCH: Phase = {
  name: 'posthog-js-like, /batch of 100',
  path: '/batch/',
  body: jsBatchBodies,
  events: EVENTS_PER_BATCH,
  connections: 10,
  headers: GEO,
};
const ALL_PHASES: Phase[] = [
  LIGHT_BATCH,
  {
    name: 'light, single /capture',
    path: '/capture/',
    body: lightSingleBody,
    events: 1,
    connections: 50,
  },
  JS_BATCH,
  {
    name: 'posthog-js-like, single /capture',
    path: '/capture/',
    body: jsSingleBodies,
    events: 1,
    connections: 50,
    headers: GEO,
  },
];
const wanted = values.only?.split(',').filter(Boolean);
const PHASES = wanted
  ? ALL_PHASES.filter((p) => wanted.every((w) => p.name.includes(w)))
  : ALL_PHASES;
const withLag = PHASES.includes(LIGHT_BATCH);
const withSustain =
  sustainSeconds > 0 && (PHASES.includes(JS_BATCH) || !!wanted?.includes('sustain'));
const withStages = values.stages && PHASES.includes(JS_BATCH);
/** e.g. BENCH_SERVER_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' to profile our server */
const serverNodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);

type Measured = MeasuredPhase;
const load = (url: string, p: Phase, secs: number) => loadPhase(url, p, secs);
const measurePhase = (
  url: string,
  pid: number | undefined,
  p: Phase,
  beforeLoad?: () => Promise<unknown>,
) => measureLoadPhase(url, pid, p, seconds, beforeLoad);

/** The ceilings: bare Fastify parsing each phase's bodies, and a hello world at 50 connections. */
async function measureCeilings() {
  const bare = await startProcess('bench/support/bareServer.ts', {});
  const ceiling = new Map<string, LoadResult>();
  let hello: LoadResult | undefined;
  try {
    for (const p of PHASES) {
      await load(bare.url, p, 2);
      ceiling.set(p.name, await load(bare.url, p, seconds));
    }
    if (PHASES.some((p) => p.events === 1)) {
      const opts = { seconds: 2, connections: 50, method: 'GET' as const };
      await closedLoad(`${bare.url}/`, '', opts);
      hello = await closedLoad(`${bare.url}/`, '', { ...opts, seconds });
    }
  } finally {
    await bare.stop();
  }
  return { ceiling, hello };
}

async function measureRawAck() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-bench-rawack-'));
  const server = await startProcess('bench/support/rawAckServer.ts', {
    DATA_DIR: dataDir,
    RAW_ACK_TOKEN: TOKEN,
  });
  const results = new Map<string, Measured>();
  try {
    for (const p of PHASES)
      results.set(p.name, await measurePhase(server.url, server.child.pid, p));
  } finally {
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return results;
}

/** posthog-js-like /batch on a server under --cpu-prof: the profile's samples of the load window by stage. */
async function measureStages() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-bench-prof-'));
  try {
    const m = await withServer(
      [...serverNodeArgs, '--cpu-prof', `--cpu-prof-dir=${dir}`],
      ({ url, pid }) => measurePhase(url, pid, JS_BATCH),
    );
    const files = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => path.join(dir, f));
    const events = m.r.total * JS_BATCH.events;
    const totals = classifyProfiles(files, { fromUs: m.fromUs, toUs: m.toUs });
    return { m, events, totals, stages: stageCpu(totals, m.cpu) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  const js = describeJsWorkload();
  console.log(
    `bench/capture: ${os.cpus().length} cores, node ${process.version}, ${seconds}s per phase; light ${fmt(lightBatchBody.length / EVENTS_PER_BATCH)} B an event; posthog-js-like ${fmt(js.bytesPerEvent)} B an event, ${js.properties} properties, $set of ${js.setKeys} keys, ${fmt(js.distinctUsers)} users cycling over ${js.bodies} bodies`,
  );
  const { ceiling, hello } = await measureCeilings();
  const rawAck = values['raw-ack'] ? await measureRawAck() : undefined;
  const targets: TargetInputs = { singles: [] };
  const lines: string[] = [];
  const out = (...l: string[]) => lines.push(...l);

  await withServer(serverNodeArgs, async ({ url, pid, db }) => {
    const ids = await readModelIds(db);
    const startHead = await logHead(db);
    let types = ['EventCaptured'];
    const settle = () => waitCaughtUp(db, ids, types);
    const ours = new Map<string, Measured & { catchUp: number }>();
    for (const p of PHASES) {
      // Each phase starts with both read models caught up, so one phase's backlog does not slow the next.
      const measured = await measurePhase(url, pid, p, async () => {
        types = await loggedTypesSince(db, startHead);
        await settle();
      });
      ours.set(p.name, { ...measured, catchUp: await settle() });
    }
    // Lag of both read models during a steady 10,000 light events/s (autocannon's overallRate).
    let steady: LoadResult | undefined;
    let steadyLag: Awaited<ReturnType<ReturnType<typeof startLagSampler>['stop']>> | undefined;
    if (withLag) {
      await settle();
      const sampler = startLagSampler(db, ids, types, 50);
      steady = await closedLoad(`${url}/batch/`, lightBatchBody, {
        seconds,
        connections,
        overallRate: 100,
      });
      steadyLag = await sampler.stop();
    }
    const target = {
      url,
      db,
      ids,
      types,
      bodies: jsBatchBodies,
      eventsPerBody: EVENTS_PER_BATCH,
      headers: GEO,
    };
    if (withSustain && types.length === 1 && types[0] === 'EventCaptured') {
      await closedLoad(`${url}/batch/`, jsBatchBodies, {
        seconds: 2,
        connections: 10,
        headers: GEO,
      });
      target.types = types = await loggedTypesSince(db, startHead);
    }
    const sustained = withSustain ? await sustain(target, rate, sustainSeconds) : undefined;
    const burstResult =
      withSustain && burstSeconds > 0 ? await burst(target, burstSeconds) : undefined;
    const logged = await logHead(db);

    out(
      '',
      '| phase | connections | ceiling events/s | ours events/s acknowledged | ratio | p50 ms | p99 ms | non-2xx | CPU µs/event: main thread, all processes | catch-up after, s |',
      '|---|---|---|---|---|---|---|---|---|---|',
    );
    const cells = (p: Phase, o: Measured) =>
      `${fmt(o.r.rps * p.events)} | ${(o.r.rps / ceiling.get(p.name)!.rps).toFixed(3)} | ${o.r.p50} | ${o.r.p99} | ${o.r.non2xx + o.r.errors} | ${cpuOf(o.cpu, 'main thread').toFixed(0)}, ${o.cpu.total.toFixed(0)}`;
    for (const p of PHASES) {
      const o = ours.get(p.name)!;
      out(
        `| ${p.name} | ${p.connections} | ${fmt(ceiling.get(p.name)!.rps * p.events)} | ${cells(p, o)} | ${o.catchUp.toFixed(1)} |`,
      );
    }
    if (hello)
      out(
        `| bare hello world (GET /, the single /capture ceiling) | 50 | ${fmt(hello.rps)} req/s | | | ${hello.p50} | ${hello.p99} | ${hello.non2xx} | | |`,
      );
    if (steady)
      out(
        `| light /batch at a fixed 10,000 events/s | ${connections} | | ${fmt(steady.rps * 100)} | | ${steady.p50} | ${steady.p99} | ${steady.non2xx} | | |`,
      );
    out(
      '',
      'CPU µs an acknowledged event by process and thread (the load generator and the ceilings excluded):',
    );
    for (const p of PHASES) out(`- ${p.name}: ${describeCpu(ours.get(p.name)!.cpu)}`);
    if (steadyLag) out('', `read-model lag at 10,000 light events/s: ${describeLag(steadyLag)}`);
    if (sustained) out('', describeSustain(sustained));
    if (burstResult) out(describeBurst(burstResult));
    out(`log head: position ${fmt(logged)}`);
    const jsBatch = ours.get(JS_BATCH.name);
    if (jsBatch)
      targets.jsBatch = {
        ratio: jsBatch.r.rps / ceiling.get(JS_BATCH.name)!.rps,
        cpu: jsBatch.cpu,
      };
    const light = ours.get(LIGHT_BATCH.name);
    if (light) targets.lightBatchRatio = light.r.rps / ceiling.get(LIGHT_BATCH.name)!.rps;
    for (const p of PHASES.filter((q) => q.events === 1))
      targets.singles.push({
        name: p.name.split(',')[0]!,
        ratio: ours.get(p.name)!.r.rps / hello!.rps,
      });
    if (sustained) targets.sustain = sustained;
    if (burstResult) targets.burst = burstResult;
  });

  if (rawAck) {
    out(
      '',
      '| phase | raw-request acknowledgement (prototype) events/s | ratio to ceiling | p50 ms | p99 ms | non-2xx | CPU µs/event: main thread, all processes |',
      '|---|---|---|---|---|---|---|',
    );
    for (const p of PHASES) {
      const o = rawAck.get(p.name)!;
      out(
        `| ${p.name} | ${fmt(o.r.rps * p.events)} | ${(o.r.rps / ceiling.get(p.name)!.rps).toFixed(3)} | ${o.r.p50} | ${o.r.p99} | ${o.r.non2xx + o.r.errors} | ${cpuOf(o.cpu, 'main thread').toFixed(0)}, ${o.cpu.total.toFixed(0)} |`,
      );
    }
  }
  if (withStages) {
    const s = await measureStages();
    targets.stages = s.stages;
    out(
      '',
      `stages: posthog-js-like /batch under --cpu-prof, ${fmt(s.m.r.rps * EVENTS_PER_BATCH)} events/s (${fmt(s.events)} events); CPU: ${describeCpu(s.m.cpu)}`,
      '',
      ...describeStages(s.totals, s.events),
      '',
      ...describeStageCpu(s.stages, s.m.cpu),
    );
  }
  out('', ...describeTargets(targets, rate));
  console.log(lines.join('\n'));
}

await main();
