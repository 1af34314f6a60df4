/**
 * bench/capture: drives the embedded server from this (second) process over loopback.
 *   npm run bench:capture [-- --seconds 10]
 * Prints acknowledged events/s and latency for /batch (100 events a request) and single /capture,
 * the same for a bare Fastify endpoint (the ceiling), and ClickHouse projection lag at 10 000 events/s.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { embeddedPostgresClient, startProcess } from './support/processes.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
  },
});
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

async function load(
  url: string,
  body: string,
  opts: { seconds?: number; overallRate?: number } = {},
) {
  const result = await autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections,
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

async function main() {
  console.log(
    `bench/capture: ${os.cpus().length} cores, node ${process.version}, ${seconds}s per phase, ${connections} connections`,
  );
  const bare = await startProcess('bench/support/bareServer.ts', {});
  const bareBatch = await load(`${bare.url}/batch/`, batchBody);
  const bareSingle = await load(`${bare.url}/capture/`, singleBody);
  await bare.stop();

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-bench-'));
  const server = await startProcess('src/main.ts', {
    DATA_DIR: dataDir,
    PORT: '0',
    INIT_PROJECT_API_KEY: TOKEN,
    INIT_PERSONAL_API_KEY: 'phx_bench_personal_key',
    LOG_LEVEL: 'warn',
  });
  const db = await embeddedPostgresClient(dataDir);
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
    await load(`${server.url}/batch/`, batchBody, { seconds: 2 }); // warm-up (JIT, caches)
    await settle();
    const batch = await load(`${server.url}/batch/`, batchBody);
    const catchUpAfterBatch = await settle();
    const single = await load(`${server.url}/capture/`, singleBody);
    await settle();

    // Lag: age of the oldest logged event ClickHouse does not have yet, sampled during a steady 10k events/s.
    const lagSql = `SELECT COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - (
        SELECT recorded_at FROM event_log WHERE position > (SELECT position FROM projection_checkpoints WHERE id = 'clickhouse:events@1')
        ORDER BY position LIMIT 1)) * 1000, 0) AS lag_ms`;
    const lags: number[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        lags.push(Number((await db.query<{ lag_ms: string }>(lagSql)).rows[0]!.lag_ms));
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const steady = await load(`${server.url}/batch/`, batchBody, { overallRate: 100 });
    sampling = false;
    await sampler;
    lags.sort((a, b) => a - b);
    const pct = (p: number) =>
      lags[Math.min(lags.length - 1, Math.floor((p / 100) * lags.length))] ?? 0;
    const logged = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM event_log WHERE type = 'EventCaptured'`,
    );

    console.log('');
    console.log('| phase | req/s | events/s acknowledged | p50 ms | p99 ms | non-2xx |');
    console.log('|---|---|---|---|---|---|');
    console.log(
      `| bare Fastify, 100-event body | ${fmt(bareBatch.rps)} | ${fmt(bareBatch.rps * 100)} | ${bareBatch.p50} | ${bareBatch.p99} | ${bareBatch.non2xx} |`,
    );
    console.log(
      `| /batch, 100 events a request | ${fmt(batch.rps)} | ${fmt(batch.rps * 100)} | ${batch.p50} | ${batch.p99} | ${batch.non2xx} |`,
    );
    console.log(
      `| bare Fastify, one event | ${fmt(bareSingle.rps)} | ${fmt(bareSingle.rps)} | ${bareSingle.p50} | ${bareSingle.p99} | ${bareSingle.non2xx} |`,
    );
    console.log(
      `| /capture, one event | ${fmt(single.rps)} | ${fmt(single.rps)} | ${single.p50} | ${single.p99} | ${single.non2xx} |`,
    );
    console.log(
      `| /batch at a fixed 10 000 events/s | ${fmt(steady.rps)} | ${fmt(steady.rps * 100)} | ${steady.p50} | ${steady.p99} | ${steady.non2xx} |`,
    );
    console.log('');
    console.log(
      `single /capture = ${((single.rps / bareSingle.rps) * 100).toFixed(1)} % of the bare endpoint's req/s`,
    );
    console.log(
      `ClickHouse projection lag at 10 000 events/s: p50 ${pct(50).toFixed(0)} ms, p99 ${pct(99).toFixed(0)} ms, max ${pct(100).toFixed(0)} ms (${lags.length} samples)`,
    );
    console.log(
      `after the saturating /batch phase, the projections (ClickHouse events, persons) needed ${catchUpAfterBatch.toFixed(1)} s to catch up`,
    );
    console.log(`events in the log: ${fmt(Number(logged.rows[0]!.n))}`);
  } finally {
    await db.end();
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
