/**
 * bench/capture: drives the embedded server from this (second) process over loopback.
 *   npm run bench:capture [-- --seconds 10]
 * Two bodies: light events (≈ 300 B, `$geoip_disable`) and events as posthog-js sends them
 * (≈ 1.1 KB: `$os`, `$browser`, `$current_url`, `$session_id`, utm properties, a `$set` of two
 * keys; GeoIP on, from `X-Forwarded-For`). For each, /batch (100 events a request) and single
 * /capture, against a bare Fastify endpoint parsing the same bodies (the ceiling, same run), with
 * the CPU per event of the server process and of its embedded Postgres; then the ClickHouse
 * projection lag at 10 000 events/s. See docs/PERFORMANCE.md "bench/capture".
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { descendantsCpu, sampleCpu } from './support/cpu.ts';
import { embeddedPostgresClient, serverEntry, startProcess } from './support/processes.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    only: { type: 'string' },
    'raw-ack': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log(`bench/capture — capture throughput against a parse-only Fastify ceiling
usage: npm run bench:capture -- [--seconds N] [--connections N] [--only word,...] [--raw-ack]
  --seconds      duration of each load phase (default 10)
  --connections  connections of the light /batch phase (default 32; posthog-js-like /batch uses 10,
                 single /capture 50, as issue #11 measures them)
  --only         run only the phases whose names contain every one of these comma-separated
                 words (light, posthog-js, batch, single); the lag phase runs with light /batch
  --raw-ack      also run each phase against a prototype that acknowledges once the raw request
                 is durably in an event log (bench/support/rawAckServer.ts; issue #11's first
                 direction, acknowledgement only: nothing normalises what it writes)
env: BENCH_SERVER_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' passes node flags to our server`);
  process.exit(0);
}
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const TOKEN = 'phc_bench_project_key';

const event = (i: number) => ({
  event: i % 5 === 0 ? '$pageview' : 'clicked button',
  properties: {
    distinct_id: `user-${i % 1000}`,
    $current_url: 'https://example.com/pricing',
    $browser: 'Chrome',
    $os: 'Mac OS X',
    $lib: 'web',
    $geoip_disable: true,
    plan: 'pro',
    amount: i,
  },
  timestamp: new Date().toISOString(),
});
const batchBody = JSON.stringify({
  api_key: TOKEN,
  batch: Array.from({ length: 100 }, (_, i) => event(i)),
});
const singleBody = JSON.stringify({ api_key: TOKEN, ...event(1) });

/** An event as posthog-js 1.x sends it (≈ 1.1 KB of JSON). */
const jsEvent = (i: number) => ({
  event: i % 4 === 0 ? '$pageview' : '$autocapture',
  properties: {
    distinct_id: `0192f0c4-7b1e-7d3a-9c4e-${String(100000000000 + (i % 5000))}`,
    $os: 'Mac OS X',
    $os_version: '14.5.0',
    $browser: 'Chrome',
    $browser_version: 126,
    $device_type: 'Desktop',
    $current_url: `https://shop.example.com/products/item-${i % 200}?ref=newsletter`,
    $host: 'shop.example.com',
    $pathname: `/products/item-${i % 200}`,
    $raw_user_agent:
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
    $screen_height: 1117,
    $screen_width: 1728,
    $viewport_height: 977,
    $viewport_width: 1728,
    $lib: 'web',
    $lib_version: '1.232.3',
    $insert_id: `ins${i.toString(36).padStart(12, '0')}`,
    $time: 1732406400.123 + i,
    $device_id: '0192f0c4-7b1e-7d3a-9c4e-4f1a2b3c4d5e',
    $session_id: '0192f0c4-7b1f-7000-8000-000000000001',
    $window_id: '0192f0c4-7b1f-7000-8000-000000000002',
    $pageview_id: '0192f0c4-7b1f-7000-8000-000000000003',
    $referrer: 'https://www.google.com/',
    $referring_domain: 'www.google.com',
    utm_source: 'newsletter',
    utm_medium: 'email',
    utm_campaign: 'autumn-sale',
    $set: { $browser: 'Chrome', $os: 'Mac OS X' },
    $set_once: { $initial_referrer: 'https://www.google.com/' },
    token: TOKEN,
  },
  timestamp: new Date().toISOString(),
});
const jsBatchBody = JSON.stringify({
  api_key: TOKEN,
  batch: Array.from({ length: 100 }, (_, i) => jsEvent(i)),
});
const jsSingleBody = JSON.stringify({ api_key: TOKEN, ...jsEvent(1) });
/** GeoIP from a public address, as behind a proxy (posthog-js bodies only). */
const GEO = { 'x-forwarded-for': '81.2.69.160' };

async function load(
  url: string,
  body: string,
  opts: {
    seconds?: number;
    overallRate?: number;
    connections?: number;
    headers?: Record<string, string>;
  } = {},
) {
  const result = await autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...opts.headers },
    body,
    connections: opts.connections ?? connections,
    duration: opts.seconds ?? seconds,
    ...(opts.overallRate ? { overallRate: opts.overallRate } : {}),
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    total: result.requests.total,
  };
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

type Phase = {
  name: string;
  path: '/batch/' | '/capture/';
  body: string;
  events: number;
  connections: number;
  headers?: Record<string, string>;
};
const ALL_PHASES: Phase[] = [
  { name: 'light, /batch of 100', path: '/batch/', body: batchBody, events: 100, connections },
  {
    name: 'light, single /capture',
    path: '/capture/',
    body: singleBody,
    events: 1,
    connections: 50,
  },
  {
    name: 'posthog-js-like, /batch of 100',
    path: '/batch/',
    body: jsBatchBody,
    events: 100,
    connections: 10,
    headers: GEO,
  },
  {
    name: 'posthog-js-like, single /capture',
    path: '/capture/',
    body: jsSingleBody,
    events: 1,
    connections: 50,
    headers: GEO,
  },
];
const wanted = values.only?.split(',').filter(Boolean);
const PHASES = wanted
  ? ALL_PHASES.filter((p) => wanted.every((w) => p.name.includes(w)))
  : ALL_PHASES;
const withLag = PHASES.some((p) => p === ALL_PHASES[0]);
/** e.g. BENCH_SERVER_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' to profile our server */
const serverNodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);

type Measured = { r: Awaited<ReturnType<typeof load>>; serverUs: number; postgresUs: number };

/**
 * One phase against the server at `url` (process `pid`): a 2-s warm-up, `beforeLoad`, then the
 * load, with the CPU an acknowledged event of the process and of the Postgres it started.
 */
async function measurePhase(
  url: string,
  pid: number | undefined,
  p: Phase,
  beforeLoad?: () => Promise<unknown>,
): Promise<Measured> {
  const opts = { connections: p.connections, ...(p.headers ? { headers: p.headers } : {}) };
  await load(`${url}${p.path}`, p.body, { ...opts, seconds: 2 }); // warm-up (JIT, caches)
  await beforeLoad?.();
  const before = { server: sampleCpu(pid).process, postgres: descendantsCpu(pid) };
  const r = await load(`${url}${p.path}`, p.body, opts);
  const events = r.total * p.events;
  return {
    r,
    serverUs: ((sampleCpu(pid).process - before.server) * 1e6) / events,
    postgresUs: ((descendantsCpu(pid) - before.postgres) * 1e6) / events,
  };
}

/** Each phase against the raw-request acknowledgement prototype, on a data directory of its own. */
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

async function main() {
  console.log(
    `bench/capture: ${os.cpus().length} cores, node ${process.version}, ${seconds}s per phase; bodies: light ${fmt(batchBody.length / 100)} B, posthog-js-like ${fmt(jsBatchBody.length / 100)} B an event`,
  );
  const bare = await startProcess('bench/support/bareServer.ts', {});
  const ceiling = new Map<string, Awaited<ReturnType<typeof load>>>();
  for (const p of PHASES) {
    await load(`${bare.url}${p.path}`, p.body, { seconds: 2, connections: p.connections });
    ceiling.set(p.name, await load(`${bare.url}${p.path}`, p.body, { connections: p.connections }));
  }
  await bare.stop();
  const rawAck = values['raw-ack'] ? await measureRawAck() : undefined;

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-bench-'));
  const server = await startProcess(
    serverEntry(),
    {
      DATA_DIR: dataDir,
      PORT: '0',
      INIT_PROJECT_API_KEY: TOKEN,
      INIT_PERSONAL_API_KEY: 'phx_bench_personal_key',
      LOG_LEVEL: 'warn',
    },
    serverNodeArgs,
  );
  const db = await embeddedPostgresClient(dataDir);
  const pid = server.child.pid;
  try {
    // Each phase starts with every projection caught up, so one phase's backlog does not slow the next.
    const settle = async () => {
      const started = Date.now();
      for (;;) {
        const { rows } = await db.query<{ behind: string }>(
          `SELECT count(*) AS behind FROM projection_checkpoints c
            WHERE c.id IN ('clickhouse:events@1', 'persons@1') AND c.position < (SELECT max(position) FROM event_log WHERE type = 'EventCaptured')`,
        );
        if (Number(rows[0]!.behind) === 0) return (Date.now() - started) / 1000;
        await new Promise((r) => setTimeout(r, 250));
      }
    };
    const ours = new Map<string, Measured & { catchUp: number }>();
    for (const p of PHASES) {
      const measured = await measurePhase(server.url, pid, p, settle);
      ours.set(p.name, { ...measured, catchUp: await settle() });
    }

    // Lag: age of the oldest logged event ClickHouse does not have yet, sampled during a steady 10k events/s.
    const lagSql = `SELECT COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - (
        SELECT recorded_at FROM event_log WHERE position > (SELECT position FROM projection_checkpoints WHERE id = 'clickhouse:events@1')
        ORDER BY position LIMIT 1)) * 1000, 0) AS lag_ms`;
    const lags: number[] = [];
    let sampling = withLag;
    const sampler = (async () => {
      while (sampling) {
        lags.push(Number((await db.query<{ lag_ms: string }>(lagSql)).rows[0]!.lag_ms));
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const steady = withLag
      ? await load(`${server.url}/batch/`, batchBody, { overallRate: 100 })
      : undefined;
    sampling = false;
    await sampler;
    lags.sort((a, b) => a - b);
    const pct = (p: number) =>
      lags[Math.min(lags.length - 1, Math.floor((p / 100) * lags.length))] ?? 0;
    const logged = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM event_log WHERE type = 'EventCaptured'`,
    );

    console.log('');
    console.log(
      '| phase | connections | ceiling events/s | ours events/s acknowledged | ratio | p50 ms | p99 ms | non-2xx | CPU µs/event: server, Postgres | catch-up after, s |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|');
    /** events/s, ratio to the ceiling, p50, p99, non-2xx, CPU: one measured phase's cells */
    const cells = (p: Phase, o: Measured) =>
      `${fmt(o.r.rps * p.events)} | ${(o.r.rps / ceiling.get(p.name)!.rps).toFixed(3)} | ${o.r.p50} | ${o.r.p99} | ${o.r.non2xx + o.r.errors} | ${o.serverUs.toFixed(0)}, ${o.postgresUs.toFixed(0)}`;
    for (const p of PHASES) {
      const o = ours.get(p.name)!;
      console.log(
        `| ${p.name} | ${p.connections} | ${fmt(ceiling.get(p.name)!.rps * p.events)} | ${cells(p, o)} | ${o.catchUp.toFixed(1)} |`,
      );
    }
    if (steady) {
      console.log(
        `| /batch at a fixed 10 000 events/s | ${connections} | | ${fmt(steady.rps * 100)} | | ${steady.p50} | ${steady.p99} | ${steady.non2xx} | | |`,
      );
      console.log('');
      console.log(
        `ClickHouse projection lag at 10 000 events/s: p50 ${pct(50).toFixed(0)} ms, p99 ${pct(99).toFixed(0)} ms, max ${pct(100).toFixed(0)} ms (${lags.length} samples)`,
      );
    }
    console.log(`events in the log: ${fmt(Number(logged.rows[0]!.n))}`);
    if (rawAck) {
      console.log('');
      console.log(
        '| phase | raw-request acknowledgement (prototype) events/s | ratio to ceiling | p50 ms | p99 ms | non-2xx | CPU µs/event: its process, Postgres |',
      );
      console.log('|---|---|---|---|---|---|---|');
      for (const p of PHASES) console.log(`| ${p.name} | ${cells(p, rawAck.get(p.name)!)} |`);
    }
  } finally {
    await db.end();
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
