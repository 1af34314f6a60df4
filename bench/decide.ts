/**
 * bench/decide: /decide against unleash-server (the best-known open-source flag server in Node) and a
 * bare Fastify hello world, in one run, each server in its own process, load from this process.
 *   npm run bench:decide [-- --seconds 10 --connections 50 --only ours,unleash,bare --json]
 * 50 flags (20 rollouts, 15 multivariate with payloads, 8 `email icontains`, 7 `country exact`),
 * 10,000 persons, a different distinct_id each request. See docs/PERFORMANCE.md "bench:decide".
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { cpuBetween, sampleCpu } from './support/cpu.ts';
import { flagSet, personOf, unleashToggles } from './support/decideFixtures.ts';
import { installUnleash } from './support/installUnleash.ts';
import { type OpenLoopResult, openLoop } from './support/openLoop.ts';
import {
  embeddedPostgresClient,
  type Started,
  serverEntry,
  startProcess,
} from './support/processes.ts';

const HELP = `bench/decide — /decide throughput vs unleash-server and a bare Fastify
usage: npm run bench:decide -- [--seconds N] [--connections N] [--only LIST] [--json]
  --seconds      duration of each load phase (default 10)
  --connections  concurrent connections (default 50)
  --only         comma-separated targets: bare, ours, unleash (default all)
  --phases       our phases: v3 (properties in the request), stored (distinct id only), flags
                 (/flags?v=2), v1 (the smallest answer), noflags (disable_flags: the
                 route without evaluation); default v3,stored,flags
  --json         print the results as JSON instead of a table
Unleash 8.2.0 is installed on first use into ~/.cache/hogstream-bench (≈40 s, never into the repo).`;

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    only: { type: 'string', default: 'bare,ours,unleash' },
    json: { type: 'boolean', default: false },
    phases: { type: 'string', default: 'v3,stored,flags' },
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
const PERSONS = 10_000;
/** e.g. BENCH_SERVER_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' to profile our server */
const serverNodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
const TOKEN = 'phc_bench_decide_key';
const PERSONAL = 'phx_bench_decide_personal';
const log = (s: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);

type Phase = {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  total: number;
  /** CPU per request during the phase: the server process (all threads), its main thread, the machine */
  cpu?: ReturnType<typeof cpuBetween>;
};
type Req = { method: string; path: string; headers: Record<string, string>; body?: string };

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
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    total: result.requests.total,
  };
}

/** Peak (saturating) then the p99 at half of that rate. */
async function measure(name: string, base: string, make: (i: number) => Req, pid?: number) {
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

async function ours() {
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
  try {
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
    const headers = { 'content-type': 'application/json' };
    // As posthog-node 4.10.2 sends it (flags.md §5.3).
    const withProps = (i: number): Req => {
      const p = personOf(i);
      return {
        method: 'POST',
        path: '/decide/?v=3',
        headers,
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
    const idOnly = (i: number): Req => ({
      method: 'POST',
      path: '/decide/?v=3',
      headers,
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
    const run = (phase: string, name: string, make: (i: number) => Req) =>
      phases.has(phase)
        ? measure(name, server.url, make, server.child.pid)
        : Promise.resolve(undefined);
    return {
      decideV3: await run('v3', 'ours /decide v3 (properties in the request)', withProps),
      decideStored: await run('stored', 'ours /decide v3 (stored properties)', idOnly),
      flagsV2: await run('flags', 'ours /flags v2', flagsV2),
      decideV1: await run('v1', 'ours /decide v1 (keys of the flags that are on)', keysOnly),
      noFlags: await run('noflags', 'ours /decide v3 with disable_flags', noFlags),
    };
  } finally {
    await db.end();
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function unleash() {
  const dir = await installUnleash(log);
  const secret = 'benchsecret0123456789';
  const tokens = {
    ADMIN_TOKEN: `*:*.${secret}`,
    CLIENT_TOKEN: `*:development.${secret}`,
    FRONTEND_TOKEN: `*:development.${secret}f`,
  };
  const pg = await start('bench/support/peerPostgres.ts', {});
  const pgPort = new URL(pg.url.replace('postgres://', 'http://')).port;
  const peer = await start('bench/support/unleashPeer.ts', {
    UNLEASH_DIR: dir,
    PG_PORT: pgPort,
    ...tokens,
  });
  try {
    log('unleash: seeding the equivalent 50 toggles');
    const admin = (method: string, p: string, body?: unknown) =>
      fetch(`${peer.url}${p}`, {
        method,
        headers: { authorization: tokens.ADMIN_TOKEN, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }).then(async (r) => {
        if (!r.ok && r.status !== 409)
          throw new Error(`${method} ${p}: ${r.status} ${await r.text()}`);
      });
    for (const name of ['email', 'country'])
      await admin('POST', '/api/admin/context', { name, stickiness: false });
    const features = '/api/admin/projects/default/features';
    for (const t of unleashToggles()) {
      await admin('POST', features, { name: t.name, type: 'release' });
      await admin('POST', `${features}/${t.name}/environments/development/strategies`, t.strategy);
      await admin('POST', `${features}/${t.name}/environments/development/on`);
    }
    const frontend = (i: number): Req => {
      const p = personOf(i);
      const q = new URLSearchParams({ userId: p.id, email: p.email, country: p.country });
      return {
        method: 'GET',
        path: `/api/frontend?${q}`,
        headers: { authorization: tokens.FRONTEND_TOKEN },
      };
    };
    const probe = await fetch(`${peer.url}${frontend(7).path}`, { headers: frontend(7).headers });
    const toggles = ((await probe.json()) as { toggles?: unknown[] }).toggles;
    if (!probe.ok || !Array.isArray(toggles) || toggles.length === 0)
      throw new Error(`unleash /api/frontend answered ${probe.status}`);
    return { frontend: await measure('unleash /api/frontend', peer.url, frontend, peer.child.pid) };
  } finally {
    await peer.stop();
    await pg.stop();
  }
}

async function bare() {
  const server = await start('bench/support/bareServer.ts', {});
  try {
    const hello = (): Req => ({ method: 'GET', path: '/', headers: {} });
    const measured = await measure('bare Fastify hello world', server.url, hello, server.child.pid);
    // The open-loop generator's own floor: the same hello world at a /decide-like 2,000 req/s.
    log('bare Fastify hello world: open loop at 2,000 req/s (the latency floor of the method)');
    const floor = await openLoop(server.url, hello, 2_000, seconds);
    return { hello: measured, floor };
  } finally {
    await server.stop();
  }
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
try {
  log(
    `bench/decide: ${os.cpus().length} cores, node ${process.version}, load ${os.loadavg()[0]!.toFixed(2)}`,
  );
  const results = {
    bare: only.has('bare') ? await bare() : undefined,
    ours: only.has('ours') ? await ours() : undefined,
    unleash: only.has('unleash') ? await unleash() : undefined,
  };
  if (values.json) {
    console.log(JSON.stringify(results, null, 2));
  } else {
    const rows: [string, { peak: Phase; half: OpenLoopResult } | undefined][] = [
      ['bare Fastify hello world', results.bare?.hello],
      ['/decide?v=3, properties in the request', results.ours?.decideV3],
      ['/decide?v=3, stored properties', results.ours?.decideStored],
      ['/flags?v=2, properties in the request', results.ours?.flagsV2],
      ['/decide?v=1 (a list of keys), properties in the request', results.ours?.decideV1],
      ['/decide?v=3 with disable_flags (no evaluation)', results.ours?.noFlags],
      ['unleash /api/frontend', results.unleash?.frontend],
    ];
    console.log(
      '| target | req/s | p50 ms | p99 ms | non-2xx | at half the peak rate: req/s, p50, p99 ms | server CPU µs/req (main thread) | machine busy cores |',
    );
    console.log('|---|---|---|---|---|---|---|---|');
    for (const [name, r] of rows)
      if (r)
        console.log(
          `| ${name} | ${fmt(r.peak.rps)} | ${r.peak.p50} | ${r.peak.p99} | ${r.peak.non2xx + r.peak.errors} | ${fmt(r.half.rps)}, ${r.half.p50}, ${r.half.p99} | ${r.peak.cpu?.processUsPerRequest} (${r.peak.cpu?.mainThreadUsPerRequest}) | ${r.peak.cpu?.machineBusyCores} |`,
        );
    const d = results.ours?.decideV3?.peak.rps;
    if (d && results.unleash)
      console.log(
        `\n/decide / unleash = ${(d / results.unleash.frontend.peak.rps).toFixed(1)}× (target ≥ 10×)`,
      );
    if (d && results.bare)
      console.log(
        `/decide / bare = ${((d / results.bare.hello.peak.rps) * 100).toFixed(1)} % (target ≥ 30 %)`,
      );
    if (results.bare)
      console.log(
        `latency floor of the method (hello world, open loop, 2,000 req/s): p50 ${results.bare.floor.p50} ms, p99 ${results.bare.floor.p99} ms`,
      );
    if (results.ours?.decideV3)
      console.log(
        `/decide p99 at half its peak: ${results.ours.decideV3.half.p99} ms (target < 5 ms)`,
      );
  }
} finally {
  await stopAll();
}
