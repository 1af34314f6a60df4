/**
 * bench/persons: persons projection throughput while /batch is loaded.
 *   npm run bench:persons [-- --seconds 15 --connections 16 --rate 3000]
 * Starts the server in its own process (as bench/capture does), loads /batch from this process with
 * autocannon — every request a fresh 100-event body: new anonymous ids, identifies merging them into
 * users, $set updates, grouped events — and samples the `persons@1` checkpoint against the log head
 * through the embedded Postgres. Prints events/s acknowledged, events/s projected, lag over time, and
 * the same at a fixed rate below saturation.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import type pg from 'pg';
import { embeddedPostgresClient, serverEntry, startProcess } from './support/processes.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '15' },
    connections: { type: 'string', default: '16' },
    rate: { type: 'string', default: '3000', description: 'events/s of the fixed-rate phase' },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const fixedRate = Number(values.rate);
const TOKEN = 'phc_bench_persons_key';
const PER_REQUEST = 100;
const CHECKPOINT = 'persons@1';
const PERSON_TYPES = [
  'EventCaptured',
  'PersonPropertiesUpdated',
  'PersonPropertyDeleted',
  'PersonSplit',
  'PersonDeleted',
];

let anonSeq = 0;
let userSeq = 0;
/** 100 events: ~55 pageviews (mostly new anonymous ids), ~20 identifies, ~15 $set, ~10 grouped events. */
function body(): string {
  const now = new Date().toISOString();
  const batch = [];
  for (let i = 0; i < PER_REQUEST; i++) {
    const roll = i % 20;
    const anon = roll < 8 || anonSeq < 50 ? `anon-${++anonSeq}` : `anon-${anonSeq - (i % 50)}`;
    const base = {
      $lib: 'web',
      $geoip_disable: true,
      $browser: 'Chrome',
      $current_url: `https://example.com/p/${i}`,
    };
    if (roll < 11)
      batch.push({
        event: '$pageview',
        timestamp: now,
        properties: { distinct_id: anon, ...base },
      });
    else if (roll < 15) {
      const user = `user-${++userSeq}`;
      batch.push({
        event: '$identify',
        timestamp: now,
        properties: {
          distinct_id: user,
          $anon_distinct_id: `anon-${Math.max(1, anonSeq - (i % 40))}`,
          $set: { email: `${user}@example.com`, plan: i % 3 ? 'free' : 'pro' },
          $set_once: { first_seen: now },
        },
      });
    } else if (roll < 18)
      batch.push({
        event: '$set',
        timestamp: now,
        properties: {
          distinct_id: `user-${Math.max(1, userSeq - (i % 30))}`,
          $set: { score: i, seen: now },
          $unset: ['old'],
        },
      });
    else
      batch.push({
        event: 'clicked',
        timestamp: now,
        properties: { distinct_id: anon, ...base, $groups: { company: `c-${i % 17}` } },
      });
  }
  return JSON.stringify({ api_key: TOKEN, batch });
}

type Sample = { at: number; checkpoint: number; head: number; lagMs: number };
async function sample(db: pg.Client): Promise<Sample> {
  const { rows } = await db.query<{
    checkpoint: string | null;
    head: string | null;
    lag_ms: string;
  }>(
    `WITH c AS (SELECT COALESCE((SELECT position FROM projection_checkpoints WHERE id = $1), -1) AS p)
     SELECT (SELECT p FROM c) AS checkpoint, (SELECT max(position) FROM event_log) AS head,
            COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - (SELECT recorded_at FROM event_log WHERE type = ANY($2::text[]) AND position > (SELECT p FROM c) ORDER BY position LIMIT 1)) * 1000, 0) AS lag_ms`,
    [CHECKPOINT, PERSON_TYPES],
  );
  const r = rows[0]!;
  return {
    at: performance.now(),
    checkpoint: Number(r.checkpoint ?? -1),
    head: Number(r.head ?? 0),
    lagMs: Number(r.lag_ms),
  };
}

/** Events of the persons projection's types between two log positions. */
async function eventsBetween(db: pg.Client, after: number, upTo: number): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    'SELECT count(*) AS n FROM event_log WHERE type = ANY($1::text[]) AND position > $2 AND position <= $3',
    [PERSON_TYPES, after, upTo],
  );
  return Number(rows[0]!.n);
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? 0;

async function phase(db: pg.Client, url: string, label: string, opts: { overallRate?: number }) {
  const samples: Sample[] = [await sample(db)];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      await new Promise((r) => setTimeout(r, 250));
      samples.push(await sample(db));
    }
  })();
  const started = performance.now();
  const result = await autocannon({
    url: `${url}/batch/`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    connections,
    duration: seconds,
    requests: [{ setupRequest: (req: Record<string, unknown>) => ({ ...req, body: body() }) }],
    ...(opts.overallRate ? { overallRate: opts.overallRate } : {}),
  });
  const loadEnd = performance.now();
  sampling = false;
  await sampler;
  const atLoadEnd = await sample(db);
  // drain: until the checkpoint reaches the head as it was when the load stopped
  let last = atLoadEnd;
  while (last.checkpoint < atLoadEnd.head) {
    await new Promise((r) => setTimeout(r, 100));
    last = await sample(db);
    if (last.at - loadEnd > 300_000)
      throw new Error('persons projection did not catch up within 5 minutes');
  }
  const first = samples[0]!;
  const projectedDuringLoad = await eventsBetween(db, first.checkpoint, atLoadEnd.checkpoint);
  const total = await eventsBetween(db, first.checkpoint, atLoadEnd.head);
  const lags = samples.map((s) => s.lagMs);
  const backlog = samples.map((s) => Math.max(0, s.head - s.checkpoint));
  return {
    label,
    ackPerSec: (result.requests.total * PER_REQUEST) / ((loadEnd - started) / 1000),
    non2xx: result.non2xx as number,
    projectedPerSecDuringLoad: projectedDuringLoad / ((atLoadEnd.at - first.at) / 1000),
    overallPerSec: total / ((last.at - first.at) / 1000),
    drainMs: last.at - loadEnd,
    total,
    lagP50: pct(lags, 50),
    lagP99: pct(lags, 99),
    lagMax: Math.max(...lags),
    backlogMax: Math.max(...backlog),
    timeline: samples
      .filter((_, i) => i % 8 === 0)
      .map(
        (s) =>
          `${((s.at - first.at) / 1000).toFixed(0)}s:${fmt(Math.max(0, s.head - s.checkpoint))}`,
      ),
  };
}

async function main() {
  console.log(
    `bench/persons: ${os.cpus().length} cores, node ${process.version}, ${seconds}s per phase, ${connections} connections, ${PER_REQUEST} events a request`,
  );
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-bench-persons-'));
  const server = await startProcess(serverEntry(), {
    DATA_DIR: dataDir,
    PORT: '0',
    INIT_PROJECT_API_KEY: TOKEN,
    INIT_PERSONAL_API_KEY: 'phx_bench_persons_personal',
    LOG_LEVEL: 'warn',
  });
  const db = await embeddedPostgresClient(dataDir);
  try {
    const saturated = await phase(db, server.url, 'saturating /batch', {});
    const fixed = await phase(db, server.url, `/batch at ${fmt(fixedRate)} events/s`, {
      overallRate: Math.max(1, Math.round(fixedRate / PER_REQUEST)),
    });
    const counts = await db.query<{ persons: string; ids: string; identified: string }>(
      'SELECT (SELECT count(*) FROM persons) AS persons, (SELECT count(*) FROM person_distinct_ids) AS ids, (SELECT count(*) FROM persons WHERE is_identified) AS identified',
    );

    console.log('');
    console.log(
      '| phase | events/s acknowledged | events/s projected during load | events/s projected incl. drain | drain after load | lag p50 / p99 / max | max backlog (events) | non-2xx |',
    );
    console.log('|---|---|---|---|---|---|---|---|');
    for (const r of [saturated, fixed]) {
      console.log(
        `| ${r.label} | ${fmt(r.ackPerSec)} | ${fmt(r.projectedPerSecDuringLoad)} | ${fmt(r.overallPerSec)} | ${(r.drainMs / 1000).toFixed(1)} s | ${fmt(r.lagP50)} / ${fmt(r.lagP99)} / ${fmt(r.lagMax)} ms | ${fmt(r.backlogMax)} | ${r.non2xx} |`,
      );
    }
    console.log('');
    for (const r of [saturated, fixed])
      console.log(
        `backlog over time, ${r.label} (events behind the head): ${r.timeline.join('  ')}`,
      );
    const c = counts.rows[0]!;
    console.log(
      `persons: ${fmt(Number(c.persons))} (${fmt(Number(c.identified))} identified), distinct ids: ${fmt(Number(c.ids))}; events projected: ${fmt(saturated.total + fixed.total)}`,
    );
    console.log(
      'note: the server process also runs the ClickHouse (chDB) events projection and capture on the same cores.',
    );
  } finally {
    await db.end();
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
