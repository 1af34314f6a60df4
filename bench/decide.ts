/**
 * bench/decide: /decide against unleash-server (the best-known open-source flag server in Node), a
 * bare Fastify hello world and /decide's floor (its irreducible work behind a bare route), in one
 * run, each server in its own process, load from this process.
 *   npm run bench:decide [-- --seconds 10 --connections 50 --rounds 3 --only ours,unleash --json]
 * 50 flags (20 rollouts, 15 multivariate with payloads, 8 `email icontains`, 7 `country exact`),
 * 10,000 persons, a different distinct_id each request. See docs/PERFORMANCE.md "bench:decide".
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { loadResult } from './support/closedLoad.ts';
import { cpuBetween, sampleCpu } from './support/cpu.ts';
import { flagSet, personOf } from './support/decideFixtures.ts';
import {
  type Measured,
  type Phase,
  printReport,
  type Req,
  type Target,
  targetOn,
} from './support/decideReport.ts';
import { type OpenLoopResult, openLoop } from './support/openLoop.ts';
import {
  embeddedPostgresClient,
  type Started,
  serverEntry,
  startProcess,
} from './support/processes.ts';
import { unleashTarget } from './support/unleashTarget.ts';

const HELP = `bench/decide — /decide throughput vs unleash-server, a bare Fastify and /decide's floor
usage: npm run bench:decide -- [--seconds N] [--connections N] [--only LIST] [--phases LIST]
                               [--rounds N] [--json]
  --seconds      duration of each load phase (default 10)
  --connections  concurrent connections (default 50)
  --only         comma-separated targets: bare, floor (/decide's irreducible work behind a
                 bare route: bench/support/decideFloor.ts), ours, unleash (default all)
  --phases       our phases: v3 (properties in the request), stored (distinct id only), flags
                 (/flags?v=2), v1 (the smallest answer), noflags (disable_flags: the
                 route without evaluation); default v3,stored,flags
  --rounds       measure every target this many times, in turn, with all servers up; the
                 table shows each target's median round and the ratios' medians (default 1)
  --json         print the results as JSON instead of a table
Unleash 8.2.0 is installed on first use into ~/.cache/hogstream-bench (≈40 s, never into the repo).`;

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    only: { type: 'string', default: 'bare,floor,ours,unleash' },
    json: { type: 'boolean', default: false },
    phases: { type: 'string', default: 'v3,stored,flags' },
    rounds: { type: 'string', default: '1' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log(HELP);
  process.exit(0);
}
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const only = new Set(values.only.split(','));
const rounds = Math.max(1, Number(values.rounds));
const PERSONS = 10_000;
/** e.g. BENCH_SERVER_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' to profile our server */
const serverNodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
const TOKEN = 'phc_bench_decide_key';
const PERSONAL = 'phx_bench_decide_personal';
const log = (s: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);

/** Load with a different request each time (distinct id cycles through the 10,000 persons). */
async function load(
  base: string,
  make: (i: number) => Req,
  opts: { seconds?: number; overallRate?: number } = {},
): Promise<Phase> {
  let i = 0;
  const first = make(0);
  const result = await autocannon({
    url: base,
    connections,
    duration: opts.seconds ?? seconds,
    ...(opts.overallRate ? { overallRate: opts.overallRate } : {}),
    requests: [
      {
        ...first,
        setupRequest: (req: Record<string, unknown>) => ({ ...req, ...make(i++ % PERSONS) }),
      },
    ],
  });
  return loadResult(result);
}

// autocannon writes content-length into a request's headers object: each request gets its own.
const jsonHeaders = () => ({ 'content-type': 'application/json' });
// As posthog-node 4.10.2 sends it (flags.md §5.3).
const withProps = (i: number, path = '/decide/?v=3'): Req => {
  const p = personOf(i);
  return {
    method: 'POST',
    path,
    headers: jsonHeaders(),
    body: JSON.stringify({
      token: TOKEN,
      distinct_id: p.id,
      groups: {},
      person_properties: { distinct_id: p.id, email: p.email, country: p.country },
      group_properties: {},
      geoip_disable: true,
    }),
  };
};

/** Peak (saturating) then the p99 at half of that rate. */
async function measure(
  name: string,
  base: string,
  make: (i: number) => Req,
  pid?: number,
): Promise<Measured> {
  log(`${name}: warm-up`);
  await load(base, make, { seconds: 2 });
  log(`${name}: peak, ${seconds}s at ${connections} connections`);
  const before = sampleCpu(pid);
  const peak = await load(base, make);
  peak.cpu = cpuBetween(before, sampleCpu(pid), peak.total);
  log(`${name}: ${Math.round(peak.rps)} req/s; p99 at half of it (open loop)`);
  const half = await openLoop(base, make, Math.max(1, Math.round(peak.rps / 2)), seconds);
  return { peak, half };
}

const started: Started[] = [];
async function start(entry: string, env: Record<string, string>, nodeArgs: string[] = []) {
  const s = await startProcess(entry, env, nodeArgs);
  started.push(s);
  return s;
}
async function stopAll() {
  for (const s of started.splice(0).reverse()) await s.stop();
}
process.on('SIGINT', () => void stopAll().finally(() => process.exit(130)));

async function api(base: string, method: string, p: string, body?: unknown, auth = PERSONAL) {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<Record<string, unknown>>;
}

/** What the setups leave to undo when the bench ends, after the last round. */
const cleanups: (() => Promise<void>)[] = [];

async function ours(): Promise<Target[]> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-bench-decide-'));
  const server = await start(
    serverEntry(),
    {
      DATA_DIR: dataDir,
      PORT: '0',
      INIT_PROJECT_API_KEY: TOKEN,
      INIT_PERSONAL_API_KEY: PERSONAL,
      LOG_LEVEL: 'warn',
      API_RATE_LIMIT_PER_MINUTE: '0',
    },
    serverNodeArgs,
  );
  const db = await embeddedPostgresClient(dataDir);
  cleanups.push(async () => {
    await db.end();
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const projects = (await api(server.url, 'GET', '/api/projects/')) as {
    results: { id: number }[];
  };
  const projectId = projects.results[0]!.id;
  log('ours: seeding 50 flags and 10,000 persons');
  for (const flag of flagSet())
    await api(server.url, 'POST', `/api/projects/${projectId}/feature_flags/`, flag);
  for (let from = 0; from < PERSONS; from += 100) {
    const batch = Array.from({ length: 100 }, (_, k) => {
      const p = personOf(from + k);
      return {
        event: '$identify',
        properties: { distinct_id: p.id, $set: { email: p.email, country: p.country } },
      };
    });
    const res = await fetch(`${server.url}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: TOKEN, batch }),
    });
    if (!res.ok) throw new Error(`/batch: ${res.status}`);
  }
  for (;;) {
    const { rows } = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM person_distinct_ids WHERE distinct_id LIKE 'person-%'`,
    );
    if (Number(rows[0]!.n) >= PERSONS) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const idOnly = (i: number): Req => ({
    method: 'POST',
    path: '/decide/?v=3',
    headers: jsonHeaders(),
    body: JSON.stringify({ token: TOKEN, distinct_id: personOf(i).id, geoip_disable: true }),
  });
  const flagsV2 = (i: number): Req => ({ ...withProps(i), path: '/flags/?v=2' });
  const keysOnly = (i: number): Req => ({ ...withProps(i), path: '/decide/?v=1' });
  // The route without evaluation: decoding, the token, the configuration answer.
  const noFlags = (i: number): Req => ({
    ...withProps(i),
    body: JSON.stringify({ ...JSON.parse(withProps(i).body!), disable_flags: true }),
  });
  const check = await fetch(`${server.url}/decide/?v=3`, withProps(7));
  const answer = (await check.json()) as { featureFlags: Record<string, unknown> };
  if (Object.keys(answer.featureFlags).length !== 50)
    throw new Error(`/decide answered ${JSON.stringify(answer).slice(0, 300)}`);
  const phases = new Set(values.phases.split(','));
  const target = (key: string, name: string, make: (i: number) => Req): Target[] =>
    phases.has(key) ? [targetOn(server, key, name, make)] : [];
  return [
    ...target('v3', '/decide?v=3, properties in the request', withProps),
    ...target('stored', '/decide?v=3, stored properties', idOnly),
    ...target('flags', '/flags?v=2, properties in the request', flagsV2),
    ...target('v1', '/decide?v=1 (a list of keys), properties in the request', keysOnly),
    ...target('noflags', '/decide?v=3 with disable_flags (no evaluation)', noFlags),
  ];
}

async function floor(): Promise<Target[]> {
  const server = await start('bench/support/decideFloor.ts', {});
  const at = (key: string, name: string, path: string) =>
    targetOn(server, key, name, (i) => withProps(i, path));
  return [
    at('floor', 'floor: our evaluator and v3 writer behind a bare route', '/decide/?v=3'),
    at('hashes', 'floor: the SHA-1s only, a fixed answer', '/hashes/'),
  ];
}

async function bare(): Promise<Target[]> {
  const server = await start('bench/support/bareServer.ts', {});
  const hello = (): Req => ({ method: 'GET', path: '/', headers: {} });
  return [targetOn(server, 'bare', 'bare Fastify hello world', hello)];
}

/** The floor and ours answer alike: the same flags on for the same person. */
async function checkFloor(targets: Target[]) {
  const answerOf = async (key: string) => {
    const t = targets.find((x) => x.key === key);
    if (!t) return undefined;
    const req = t.make(7);
    const res = await fetch(`${t.url}${req.path}`, req);
    const a = (await res.json()) as { featureFlags?: unknown; featureFlagPayloads?: unknown };
    return JSON.stringify([a.featureFlags, a.featureFlagPayloads]);
  };
  const [floorAnswer, oursAnswer] = [await answerOf('floor'), await answerOf('v3')];
  if (floorAnswer && oursAnswer && floorAnswer !== oursAnswer)
    throw new Error(`the floor answers otherwise than /decide:\n${floorAnswer}\n${oursAnswer}`);
}

try {
  log(
    `bench/decide: ${os.cpus().length} cores, node ${process.version}, load ${os.loadavg()[0]!.toFixed(2)}`,
  );
  // Every server is started first and stays up: the rounds then measure them in turn, so a
  // ratio compares targets measured minutes apart, not a whole run apart.
  const targets = [
    ...(only.has('bare') ? await bare() : []),
    ...(only.has('floor') ? await floor() : []),
    ...(only.has('ours') ? await ours() : []),
    ...(only.has('unleash') ? await unleashTarget({ start, log, cleanups }) : []),
  ];
  await checkFloor(targets);
  const runs = new Map<string, Measured[]>(targets.map((t) => [t.key, []]));
  let methodFloor: OpenLoopResult | undefined;
  for (let round = 1; round <= rounds; round++) {
    if (rounds > 1) log(`round ${round} of ${rounds}`);
    for (const t of targets) runs.get(t.key)!.push(await measure(t.name, t.url, t.make, t.pid));
    const hello = targets.find((t) => t.key === 'bare');
    if (hello && !methodFloor) {
      // The open-loop generator's own floor: the hello world at a /decide-like 2,000 req/s.
      log('bare Fastify hello world: open loop at 2,000 req/s (the latency floor of the method)');
      methodFloor = await openLoop(hello.url, hello.make, 2_000, seconds);
    }
  }
  if (values.json) console.log(JSON.stringify({ rounds: Object.fromEntries(runs), methodFloor }));
  else printReport(targets, runs, methodFloor);
} finally {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  await stopAll();
}
