/**
 * bench/hogql: the HogQL compiler in process (PostHog's parser, then parse + compile, per query),
 * and `POST /query` against the same question asked through the events list, end to end over a
 * seeded history, with the server's CPU per request.
 *   npm run bench:hogql [-- --events 100000 --iterations 200 --calls 30 --json]
 * See docs/PERFORMANCE.md "bench:hogql".
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { compileHogQL, parseSelect, warmParser } from '../projections/hogql/index.ts';
import { SelectPrinter } from '../projections/hogql/printSelect.ts';
import { postgresInClickHouse } from '../projections/hogql/tables.ts';
import type { ClickHouse } from '../src/runtime/clickhouse.ts';
import { descendantsCpu, processCpu } from './support/cpu.ts';
import { type Started, serverEntry, startProcess } from './support/processes.ts';

const HELP = `bench/hogql — the HogQL compiler, and /query against the events list
usage: npm run bench:hogql -- [--events N] [--iterations N] [--calls N] [--compiler-only] [--json]
  --events         events to capture for the end-to-end part (default 100000)
  --iterations     parses and compiles per query in process (default 200)
  --calls          calls per question and endpoint; p50 and p99 of them (default 30)
  --compiler-only  skip the end-to-end part (no server)
  --json           print the results as JSON`;

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '100000' },
    iterations: { type: 'string', default: '200' },
    calls: { type: 'string', default: '30' },
    'compiler-only': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log(HELP);
  process.exit(0);
}
const EVENTS = Number(values.events);
const ITERATIONS = Number(values.iterations);
const CALLS = Number(values.calls);
const TOKEN = 'phc_bench_hogql_key';
const PERSONAL = 'phx_bench_hogql_personal';
const log = (s: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);
const pct = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

/** Queries of growing size: what a user types, what a notebook sends, what a generator writes. */
const COMPILER_QUERIES: [string, string][] = [
  ['count by event', 'SELECT event, count() FROM events GROUP BY event ORDER BY count() DESC'],
  [
    'properties, person, interval',
    "SELECT properties.$browser, person.properties.email, count() FROM events WHERE event = '$pageview' AND timestamp > now() - interval 7 day GROUP BY 1, 2",
  ],
  [
    'join + CTE + subquery',
    "WITH buyers AS (SELECT person_id FROM events WHERE event = 'purchased') SELECT p.properties.plan, count() FROM events e JOIN persons p ON e.person_id = p.id WHERE e.person_id IN (SELECT person_id FROM buyers) GROUP BY 1",
  ],
  [
    'UNION ALL of 20',
    Array.from(
      { length: 20 },
      (_, i) => `SELECT '${i}', count() FROM events WHERE event = 'e${i}'`,
    ).join(' UNION ALL '),
  ],
  [
    'IN list of 1,000',
    `SELECT count() FROM events WHERE distinct_id IN (${Array.from({ length: 1000 }, (_, i) => `'user-${i}'`).join(', ')})`,
  ],
];

/** The parser thread's start as the server does it (warmParser), then a first, unseen query. */
async function benchStart() {
  let t0 = performance.now();
  await warmParser();
  const warmMs = Math.round(performance.now() - t0);
  t0 = performance.now();
  await parseSelect(
    "SELECT properties.$os, uniq(person_id) FROM events WHERE event = 'signed_up' GROUP BY 1 -- first",
  );
  const firstParseMs = Math.round(performance.now() - t0);
  log(
    `parser thread loaded and warmed in ${warmMs} ms; a first unseen query then parsed in ${firstParseMs} ms`,
  );
  return { warmMs, firstParseMs };
}

async function benchCompiler() {
  // compiled as for a server whose Postgres read models ClickHouse reaches by TCP
  const deps = {
    ch: { database: 'bench' } as unknown as ClickHouse,
    postgres: postgresInClickHouse('postgres://bench:secret@127.0.0.1:5432/bench'),
  };
  const rows: Record<string, unknown>[] = [];
  for (const [name, query] of COMPILER_QUERIES) {
    const measure = async (f: () => Promise<unknown>) => {
      for (let i = 0; i < Math.min(20, ITERATIONS); i++) await f(); // warm-up (JIT, parser load)
      const cpu = process.cpuUsage();
      const t0 = performance.now();
      for (let i = 0; i < ITERATIONS; i++) await f();
      const wall = ((performance.now() - t0) * 1000) / ITERATIONS;
      const used = process.cpuUsage(cpu);
      return {
        wallUs: Math.round(wall),
        cpuUs: Math.round((used.user + used.system) / ITERATIONS),
      };
    };
    // a different text each time (a trailing comment) misses the parse cache: the parser's cost
    let n = 0;
    const fresh = () => `${query} -- ${n++}`;
    const parse = await measure(() => parseSelect(fresh()));
    // the compiler's own part alone: the AST parsed once, printed each time
    const ast = await parseSelect(query);
    const context = {
      database: 'bench',
      projectId: 1,
      postgres: deps.postgres,
      text: query,
      values: {},
      filters: undefined,
    };
    const print = await measure(async () => new SelectPrinter(context).print(ast));
    const compile = await measure(() => compileHogQL(deps, { projectId: 1, query: fresh() }));
    // the same text again (a dashboard's refresh): the parse cache's hit, then the printer
    const cached = await measure(() => compileHogQL(deps, { projectId: 1, query }));
    const row = {
      query: name,
      chars: query.length,
      // CPU, not wall time: on a shared machine wall time measures the neighbours
      parseCpuUs: parse.cpuUs,
      parseCompileCpuUs: compile.cpuUs,
      printCpuUs: print.cpuUs,
      parseCompileWallUs: compile.wallUs,
      cachedCompileCpuUs: cached.cpuUs,
    };
    log(`compiler: ${JSON.stringify(row)}`);
    rows.push(row);
  }
  return rows;
}

// biome-ignore lint/suspicious/noExplicitAny: two endpoints' answers, read loosely
type Answer = { status: number; body: any; ms: number };
async function call(
  base: string,
  method: 'GET' | 'POST',
  p: string,
  body?: unknown,
): Promise<Answer> {
  const t0 = performance.now();
  const res = await fetch(`${base}${p}`, {
    method,
    headers: {
      authorization: `Bearer ${PERSONAL}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const parsed = await res.json();
  return { status: res.status, body: parsed, ms: performance.now() - t0 };
}

const j = (v: unknown) => encodeURIComponent(JSON.stringify(v));
/** The same question both ways: [name, events list path, HogQL]. */
const QUESTIONS = (project: number): [string, string, string][] => {
  const events = `/api/projects/${project}/events/`;
  return [
    [
      'latest 100 pageviews with browser',
      `${events}?event=$pageview&select=${j(['event', 'properties.$browser', 'timestamp'])}&limit=100`,
      "SELECT event, properties.$browser, timestamp FROM events WHERE event = '$pageview' ORDER BY timestamp DESC LIMIT 100",
    ],
    [
      'count by browser',
      `${events}?select=${j(['properties.$browser', 'count()'])}`,
      'SELECT properties.$browser, count() FROM events GROUP BY properties.$browser',
    ],
    [
      'one user, last day',
      `${events}?distinct_id=user-7&after=-1d&select=${j(['event', 'timestamp'])}`,
      "SELECT event, timestamp FROM events WHERE distinct_id = 'user-7' AND timestamp > now() - interval 1 day ORDER BY timestamp DESC",
    ],
  ];
};

async function seed(url: string): Promise<number> {
  const BROWSERS = ['Chrome', 'Firefox', 'Safari', 'Edge'];
  const now = Date.now();
  let sent = 0;
  while (sent < EVENTS) {
    const n = Math.min(2_000, EVENTS - sent);
    const batch = Array.from({ length: n }, (_, k) => {
      const i = sent + k;
      return {
        event: i % 10 < 7 ? '$pageview' : i % 10 < 9 ? 'signed_up' : 'purchased',
        timestamp: new Date(now - ((i * 7919) % (3 * 86_400_000))).toISOString(),
        properties: {
          distinct_id: `user-${i % 5_000}`,
          $browser: BROWSERS[i % 4],
          $current_url: `/page-${i % 10}`,
        },
      };
    });
    const res = await fetch(`${url}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: TOKEN, batch }),
    });
    if (!res.ok) throw new Error(`/batch: ${res.status} ${await res.text()}`);
    sent += n;
  }
  return sent;
}

async function benchEndToEnd(server: Started) {
  const project = (await call(server.url, 'GET', '/api/projects/')).body.results[0].id as number;
  const query = (q: string) =>
    call(server.url, 'POST', `/api/projects/${project}/query/`, {
      query: { kind: 'HogQLQuery', query: q },
    });
  const t0 = Date.now();
  const sent = await seed(server.url);
  for (;;) {
    const r = await query('SELECT count() FROM events');
    if (r.status !== 200) throw new Error(`/query: ${r.status} ${JSON.stringify(r.body)}`);
    if (Number(r.body.results[0][0]) >= sent) break;
    await new Promise((r) => setTimeout(r, 2_000));
  }
  log(
    `seeded ${sent.toLocaleString('en-US')} events, in ClickHouse after ${((Date.now() - t0) / 1000).toFixed(1)} s`,
  );
  const pid = server.child.pid;
  const cpu = () => processCpu(pid) + descendantsCpu(pid);
  const rows: Record<string, unknown>[] = [];
  for (const [name, listPath, hogql] of QUESTIONS(project)) {
    for (const [endpoint, ask] of [
      ['events list', () => call(server.url, 'GET', listPath)],
      ['/query', () => query(hogql)],
    ] as const) {
      const cold = await ask();
      if (cold.status !== 200)
        throw new Error(`${name} ${endpoint}: ${cold.status} ${JSON.stringify(cold.body)}`);
      const times: number[] = [];
      const before = cpu();
      for (let i = 0; i < CALLS; i++) times.push((await ask()).ms);
      const row = {
        question: name,
        endpoint,
        rows: (cold.body.results as unknown[]).length,
        p50: Math.round(pct(times, 0.5)),
        p99: Math.round(pct(times, 0.99)),
        cold: Math.round(cold.ms),
        serverCpuMsPerCall: Number((((cpu() - before) * 1000) / CALLS).toFixed(1)),
      };
      log(`${JSON.stringify(row)}`);
      rows.push(row);
    }
  }
  return rows;
}

let server: Started | undefined;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-bench-hogql-'));
try {
  log(
    `bench/hogql: ${os.cpus().length} cores, node ${process.version}, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const start = await benchStart();
  const compiler = await benchCompiler();
  let endToEnd: Record<string, unknown>[] = [];
  if (!values['compiler-only']) {
    server = await startProcess(serverEntry(), {
      DATA_DIR: dataDir,
      PORT: '0',
      INIT_PROJECT_API_KEY: TOKEN,
      INIT_PERSONAL_API_KEY: PERSONAL,
      LOG_LEVEL: 'warn',
      API_RATE_LIMIT_PER_MINUTE: '0',
    });
    endToEnd = await benchEndToEnd(server);
  }
  if (values.json) console.log(JSON.stringify({ start, compiler, endToEnd }, null, 2));
  else {
    console.log(
      '| query | characters | parse CPU µs | parse + compile CPU µs | compile alone (AST printed) CPU µs | parse + compile wall µs | repeated text (parse cache hit) + compile CPU µs |',
    );
    console.log('|---|---|---|---|---|---|---|');
    for (const r of compiler)
      console.log(
        `| ${r.query} | ${r.chars} | ${r.parseCpuUs} | ${r.parseCompileCpuUs} | ${r.printCpuUs} | ${r.parseCompileWallUs} | ${r.cachedCompileCpuUs} |`,
      );
    if (endToEnd.length) {
      console.log(
        '\n| question | endpoint | rows | p50 ms | p99 ms | first call ms | server CPU ms a call |',
      );
      console.log('|---|---|---|---|---|---|---|');
      for (const r of endToEnd)
        console.log(
          `| ${r.question} | ${r.endpoint} | ${r.rows} | ${r.p50} | ${r.p99} | ${r.cold} | ${r.serverCpuMsPerCall} |`,
        );
    }
  }
  console.log(
    `\nload average at the end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
} finally {
  await server?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
