/**
 * bench/analytics: latency of every person analytics endpoint (the chart and the first page of
 * persons) over a seeded history, on the embedded default.
 *   npm run bench:analytics [-- --events 1000000 --persons 50000 --calls 20 --json]
 * History: `persons` persons over 30 days before the clock, `events / persons` events each
 * ($pageview with one of 10 URLs and 4 browsers, viewed_pricing, signed_up, purchased), one in
 * ten starting anonymous and merged by $identify. See docs/PERFORMANCE.md "bench:analytics".
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type Started, serverEntry, startProcess } from './support/processes.ts';

const HELP = `bench/analytics — person analytics latency over a seeded history
usage: npm run bench:analytics -- [--events N] [--persons N] [--calls N] [--json]
  --events   events to capture (default 1000000)
  --persons  persons (default 50000)
  --calls    calls per endpoint; p50 and p99 of them (default 20)
  --json     print the results as JSON`;

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '1000000' },
    persons: { type: 'string', default: '50000' },
    calls: { type: 'string', default: '20' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log(HELP);
  process.exit(0);
}
const EVENTS = Number(values.events);
const PERSONS = Number(values.persons);
const CALLS = Number(values.calls);
const TOKEN = 'phc_bench_analytics_key';
const PERSONAL = 'phx_bench_analytics_personal';
const DAY = 86_400_000;
const END = Date.parse('2024-07-01T00:00:00Z');
const log = (s: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);

const URLS = Array.from({ length: 10 }, (_, i) => `/page-${i}`);
const BROWSERS = ['Chrome', 'Firefox', 'Safari', 'Edge'];

/** A deterministic pseudo-random stream (mulberry32), so runs are comparable. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One person's events, oldest first. */
function personEvents(p: number, count: number, rnd: () => number) {
  const id = `user-${p}`;
  const anon = p % 10 === 0 ? `anon-${p}` : undefined;
  const start = END - 30 * DAY + Math.floor(rnd() * 25 * DAY);
  const events: Record<string, unknown>[] = [];
  let at = start;
  for (let i = 0; i < count; i++) {
    at += Math.floor((rnd() * (5 * DAY)) / count) + 1000;
    const r = rnd();
    const event =
      r < 0.7 ? '$pageview' : r < 0.85 ? 'viewed_pricing' : r < 0.95 ? 'signed_up' : 'purchased';
    const distinctId = anon && i < count / 3 ? anon : id;
    if (anon && i === Math.floor(count / 3))
      events.push({
        event: '$identify',
        timestamp: new Date(at - 500).toISOString(),
        properties: {
          distinct_id: id,
          $anon_distinct_id: anon,
          $set: { plan: p % 3 === 0 ? 'pro' : 'free' },
        },
      });
    events.push({
      event,
      timestamp: new Date(at).toISOString(),
      properties: {
        distinct_id: distinctId,
        $current_url: URLS[Math.floor(rnd() * URLS.length)],
        $browser: BROWSERS[p % BROWSERS.length],
      },
    });
  }
  return events;
}

async function seed(url: string) {
  const rnd = random(20261124);
  const perPerson = Math.max(1, Math.round(EVENTS / PERSONS));
  let sent = 0;
  let batch: Record<string, unknown>[] = [];
  const inFlight = new Set<Promise<void>>();
  const flush = async (events: Record<string, unknown>[]) => {
    const res = await fetch(`${url}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: TOKEN, batch: events }),
    });
    if (!res.ok) throw new Error(`/batch: ${res.status} ${await res.text()}`);
  };
  const started = Date.now();
  for (let p = 0; p < PERSONS; p++) {
    // A person's events go in one request: the log keeps their order, $identify included.
    batch.push(...personEvents(p, perPerson, rnd));
    if (batch.length >= 2_000) {
      const request = flush(batch).finally(() => inFlight.delete(request));
      inFlight.add(request);
      sent += batch.length;
      batch = [];
      if (inFlight.size >= 4) await Promise.race(inFlight);
      if (p % 5_000 < 100)
        log(
          `seeding: ${sent.toLocaleString('en-US')} events, ${Math.round(sent / ((Date.now() - started) / 1000))}/s`,
        );
    }
  }
  if (batch.length) {
    sent += batch.length;
    await flush(batch);
  }
  await Promise.all(inFlight);
  return sent;
}

// biome-ignore lint/suspicious/noExplicitAny: the answers of eight endpoints, read loosely
async function api(base: string, p: string): Promise<{ status: number; body: any; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(`${base}${p}`, { headers: { authorization: `Bearer ${PERSONAL}` } });
  const body = await res.json();
  return { status: res.status, body, ms: performance.now() - t0 };
}

const j = (v: unknown) => encodeURIComponent(JSON.stringify(v));
const PV = j([{ id: '$pageview' }]);
const FUNNEL = j([{ id: '$pageview' }, { id: 'signed_up' }, { id: 'purchased' }]);
const RANGE = 'date_from=2024-06-01&date_to=2024-06-30';

/** [name, aggregate path, first actors page path] per endpoint. */
const ENDPOINTS = (project: number): [string, string, string][] => {
  const a = `/api/projects/${project}`;
  return [
    [
      'trends',
      `${a}/insights/trend/?events=${PV}&${RANGE}`,
      `${a}/persons/trends/?events=${PV}&date_from=2024-06-20`,
    ],
    [
      'trends dau + breakdown',
      `${a}/insights/trend/?events=${j([{ id: '$pageview', math: 'dau' }])}&${RANGE}&breakdown=$browser`,
      `${a}/persons/trends/?events=${PV}&date_from=2024-06-20&breakdown=$browser&breakdown_value=Chrome`,
    ],
    [
      'stickiness',
      `${a}/insights/trend/?events=${PV}&${RANGE}&shown_as=Stickiness`,
      `${a}/persons/stickiness/?events=${PV}&${RANGE}&stickiness_days=3`,
    ],
    [
      'lifecycle',
      `${a}/insights/trend/?events=${PV}&${RANGE}&shown_as=Lifecycle`,
      `${a}/persons/lifecycle/?events=${PV}&${RANGE}&lifecycle_type=returning&target_date=2024-06-20`,
    ],
    [
      'funnel',
      `${a}/insights/funnel/?events=${FUNNEL}&${RANGE}`,
      `${a}/persons/funnel/?events=${FUNNEL}&${RANGE}&funnel_step=2`,
    ],
    [
      'funnel correlation',
      `${a}/insights/funnel/correlation/?events=${FUNNEL}&${RANGE}`,
      `${a}/persons/funnel/correlation/?events=${FUNNEL}&${RANGE}&funnel_correlation_person_entity=${j({ id: 'viewed_pricing' })}`,
    ],
    [
      'retention',
      `${a}/insights/retention/?date_to=2024-06-30&total_intervals=11`,
      `${a}/persons/retention/?date_to=2024-06-30&total_intervals=11&selected_interval=5`,
    ],
    [
      'paths',
      `${a}/insights/path/?${RANGE}`,
      `${a}/persons/path/?${RANGE}&path_start_key=1_/page-1&path_end_key=2_/page-2`,
    ],
  ];
};

const pct = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

let server: Started | undefined;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-bench-analytics-'));
try {
  log(
    `bench/analytics: ${os.cpus().length} cores, node ${process.version}, ${EVENTS.toLocaleString('en-US')} events, ${PERSONS.toLocaleString('en-US')} persons`,
  );
  server = await startProcess(serverEntry(), {
    DATA_DIR: dataDir,
    PORT: '0',
    INIT_PROJECT_API_KEY: TOKEN,
    INIT_PERSONAL_API_KEY: PERSONAL,
    LOG_LEVEL: 'warn',
    API_RATE_LIMIT_PER_MINUTE: '0',
  });
  const projects = await api(server.url, '/api/projects/');
  const project = projects.body.results[0].id as number;
  const t0 = Date.now();
  const sent = await seed(server.url);
  log(
    `seeded ${sent.toLocaleString('en-US')} events in ${((Date.now() - t0) / 1000).toFixed(1)} s; waiting for the read models`,
  );
  const all = `/api/projects/${project}/insights/trend/?events=${j([{ id: null }])}&date_from=all&interval=month`;
  for (;;) {
    const r = await api(server.url, all);
    const total = (r.body.result?.[0]?.count as number | undefined) ?? 0;
    if (total >= sent) break;
    log(
      `  ${total.toLocaleString('en-US')} of ${sent.toLocaleString('en-US')} events in ClickHouse`,
    );
    await new Promise((r) => setTimeout(r, 5_000));
  }
  log(`read models caught up ${((Date.now() - t0) / 1000).toFixed(1)} s after the first event`);
  const results: Record<string, unknown>[] = [];
  for (const [name, aggregate, actors] of ENDPOINTS(project)) {
    const times: { aggregate: number[]; actors: number[] } = { aggregate: [], actors: [] };
    let people = 0;
    // The first call of each (cold: ClickHouse reads the parts for the first time) is reported
    // apart, not in the percentiles.
    const coldAggregate = (await api(server.url, aggregate)).ms;
    const coldActors = (await api(server.url, actors)).ms;
    for (let i = 0; i < CALLS; i++) {
      const a = await api(server.url, aggregate);
      if (a.status !== 200) throw new Error(`${name}: ${a.status} ${JSON.stringify(a.body)}`);
      times.aggregate.push(a.ms);
      const p = await api(server.url, actors);
      if (p.status !== 200)
        throw new Error(`${name} actors: ${p.status} ${JSON.stringify(p.body)}`);
      times.actors.push(p.ms);
      people = p.body.results[0].people.length;
    }
    const row = {
      endpoint: name,
      aggregateP50: Math.round(pct(times.aggregate, 0.5)),
      aggregateP99: Math.round(pct(times.aggregate, 0.99)),
      actorsP50: Math.round(pct(times.actors, 0.5)),
      actorsP99: Math.round(pct(times.actors, 0.99)),
      coldAggregate: Math.round(coldAggregate),
      coldActors: Math.round(coldActors),
      people,
    };
    log(`${name}: ${JSON.stringify(row)}`);
    results.push(row);
  }
  if (values.json) console.log(JSON.stringify(results, null, 2));
  else {
    console.log(
      '| endpoint | aggregate p50 ms | p99 ms | first actors page p50 ms | p99 ms | first calls (cold) ms | persons on the page |',
    );
    console.log('|---|---|---|---|---|---|---|');
    for (const r of results)
      console.log(
        `| ${r.endpoint} | ${r.aggregateP50} | ${r.aggregateP99} | ${r.actorsP50} | ${r.actorsP99} | ${r.coldAggregate}, ${r.coldActors} | ${r.people} |`,
      );
  }
} finally {
  await server?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
