/**
 * bench/rebuild: how long rebuilding the read models from the log takes (issue #11).
 *   npm run bench:rebuild [-- --events 1000000 --persons 100000]
 * Captures the history through /batch/ (a running server, embedded default): per person a few
 * $pageview/clicked events, one in three $identify'd from an anonymous id, one in five aliased,
 * $set/$set_once on a quarter of the events, $groups (company) on a fifth; then starts the server
 * again and times, beside it, `npm run cli -- rebuild persons`, `rebuild events` (the ClickHouse
 * events table and the distinct id map, which the running server rebuilds on the CLI's request:
 * embedded chDB lives in its process) and both at once (`rebuild persons events`), as a user runs
 * them (the compiled CLI, as the server), while a probe asks the server for a
 * page of events every --probe-ms (500; its latency and failures show whether it kept answering).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { descendantsCpu, processCpu, sampleCpu } from './support/cpu.ts';
import { root, serverEntry, startProcess } from './support/processes.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '1000000' },
    persons: { type: 'string', default: '100000' },
    keep: { type: 'string' },
    'probe-ms': { type: 'string', default: '500' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log(`bench/rebuild — rebuild time of the persons and ClickHouse read models
usage: npm run bench:rebuild -- [--events N] [--persons N]
  --events   events to capture first (default 1000000)
  --persons  persons they belong to (default 100000)
  --keep DIR keep the captured data in DIR (reused when it exists: only the rebuilds run)
  --probe-ms how often the server is asked for a page of events meanwhile (default 500)`);
  process.exit(0);
}
const EVENTS = Number(values.events);
const PERSONS = Number(values.persons);
const TOKEN = 'phc_bench_rebuild_key';
const PERSONAL = 'phx_bench_rebuild_personal';
const log = (s: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);

function personEvents(p: number, count: number): Record<string, unknown>[] {
  const id = `user-${p}`;
  const anon = p % 3 === 0 ? `anon-${p}` : undefined;
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < count; i++) {
    const distinctId = anon && i < count / 2 ? anon : id;
    if (anon && i === Math.floor(count / 2))
      out.push({
        event: '$identify',
        properties: {
          distinct_id: id,
          $anon_distinct_id: anon,
          $set: { email: `${id}@example.com` },
        },
      });
    else if (p % 5 === 0 && i === count - 1)
      out.push({ event: '$create_alias', properties: { distinct_id: id, alias: `alias-${p}` } });
    else
      out.push({
        event: i % 3 === 0 ? '$pageview' : 'clicked',
        properties: {
          distinct_id: distinctId,
          $current_url: `https://example.com/p/${i % 20}`,
          $geoip_disable: true,
          ...(i % 4 === 0
            ? { $set: { plan: p % 2 ? 'pro' : 'free', seen: i }, $set_once: { first_seen: i } }
            : {}),
          ...(i % 5 === 0 ? { $groups: { company: `company-${p % 1000}` } } : {}),
        },
      });
  }
  return out;
}

type CliRun = { ms: number; out: string; cpuS: number };

function cli(dataDir: string, ...args: string[]): Promise<CliRun> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    // The CLI as the server runs: compiled (what the Docker image runs), or through tsx.
    const entry = serverEntry().replace(/main\.(ts|js)$/, 'cli/main.$1');
    const loader = entry.endsWith('.ts') ? ['--import', 'tsx'] : [];
    const child = spawn(process.execPath, [...loader, entry, ...args], {
      cwd: root,
      env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    // its CPU, read until it exits (the last 100 ms may be missed)
    let cpuS = 0;
    const poll = setInterval(() => {
      const s = processCpu(child.pid);
      if (!Number.isNaN(s)) cpuS = s;
    }, 100);
    child.on('exit', (code) => {
      clearInterval(poll);
      if (code === 0) resolve({ ms: performance.now() - t0, out, cpuS });
      else reject(new Error(`cli ${args.join(' ')}: ${code}\n${out}`));
    });
  });
}

/**
 * Asks the server for a page of events every `everyMs` until stopped: does it keep answering?
 * Each answer is a ClickHouse query over the whole table: every 100 ms that cost the server
 * ≈ 15 s of CPU during a 1,000,000-event persons rebuild, taken from the rebuilds on two cores.
 */
function startProbe(url: string, everyMs: number) {
  const latencies: number[] = [];
  let failed = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const t0 = performance.now();
      const res = await fetch(`${url}/api/projects/@current/events/?limit=10`, {
        headers: { authorization: `Bearer ${PERSONAL}` },
        signal: AbortSignal.timeout(30_000),
      }).catch(() => undefined);
      if (res?.ok) latencies.push(performance.now() - t0);
      else failed++;
      await res?.arrayBuffer().catch(() => undefined);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      latencies.sort((a, b) => a - b);
      const at = (q: number) =>
        Math.round(
          latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0,
        );
      return { ok: latencies.length, failed, p99: at(0.99), max: at(1) };
    },
  };
}

/** Captures the history through a running server, then stops it; returns how many events. */
async function captureHistory(): Promise<number> {
  const server = await startProcess(serverEntry(), {
    DATA_DIR: dataDir,
    PORT: '0',
    INIT_PROJECT_API_KEY: TOKEN,
    INIT_PERSONAL_API_KEY: PERSONAL,
    LOG_LEVEL: 'warn',
  });
  const perPerson = Math.max(1, Math.round(EVENTS / PERSONS));
  let sent = 0;
  let batch: Record<string, unknown>[] = [];
  const inFlight = new Set<Promise<void>>();
  const t0 = Date.now();
  const flush = async (events: Record<string, unknown>[]) => {
    const res = await fetch(`${server.url}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: TOKEN, batch: events }),
    });
    if (!res.ok) throw new Error(`/batch: ${res.status}`);
  };
  for (let p = 0; p < PERSONS; p++) {
    batch.push(...personEvents(p, perPerson));
    if (batch.length >= 2_000) {
      const request = flush(batch).finally(() => inFlight.delete(request));
      inFlight.add(request);
      sent += batch.length;
      batch = [];
      if (inFlight.size >= 4) await Promise.race(inFlight);
      if (p % 10_000 < 200) log(`capturing: ${sent.toLocaleString('en-US')} events`);
    }
  }
  if (batch.length) {
    sent += batch.length;
    await flush(batch);
  }
  await Promise.all(inFlight);
  log(
    `captured ${sent.toLocaleString('en-US')} events in ${((Date.now() - t0) / 1000).toFixed(1)} s; stopping the server`,
  );
  await server.stop();
  return sent;
}

const reuse = values.keep !== undefined && fs.existsSync(path.join(values.keep, 'postgres'));
const dataDir = values.keep ?? fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-bench-rebuild-'));
try {
  log(
    `bench/rebuild: ${os.cpus().length} cores, node ${process.version}, ${EVENTS.toLocaleString('en-US')} events, ${PERSONS.toLocaleString('en-US')} persons`,
  );
  let sent = reuse ? EVENTS : 0;
  if (!reuse) sent = await captureHistory();
  const server = await startProcess(serverEntry(), {
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'warn',
  });
  try {
    const serverPid = server.child.pid;
    const timed = async (label: string, ...args: string[]) => {
      const probe = startProbe(server.url, Number(values['probe-ms']));
      const before = { server: sampleCpu(serverPid), postgres: descendantsCpu(serverPid) };
      const r = await cli(dataDir, ...args);
      const p = await probe.stop();
      const after = sampleCpu(serverPid);
      const cpu = {
        cli: r.cpuS,
        server: after.process - before.server.process,
        serverMain: after.mainThread - before.server.mainThread,
        postgres: descendantsCpu(serverPid) - before.postgres,
      };
      log(`${label}: ${(r.ms / 1000).toFixed(1)} s`);
      return { ...r, probe: p, cpu };
    };
    const persons = await timed('rebuild persons', 'rebuild', 'persons', '--json');
    const events = await timed('rebuild events', 'rebuild', 'events', '--json');
    // Both at once, as `rebuild all` runs them: persons in the CLI, ClickHouse in the server.
    const both = await timed('rebuild persons events', 'rebuild', 'persons', 'events', '--json');
    console.log(
      '| read model | events replayed | wall s | events/s | CPU µs/event: CLI, server (its main thread), Postgres | server meanwhile: answers, failures, p99 / max ms |',
    );
    console.log('|---|---|---|---|---|---|');
    const perEvent = (seconds: number) => Math.round((seconds * 1e6) / sent);
    for (const [name, r] of [
      ['persons (Postgres)', persons],
      ['ClickHouse events + distinct id map', events],
      ['both side by side (`rebuild persons events`)', both],
    ] as const)
      console.log(
        `| ${name} | ${sent.toLocaleString('en-US')} | ${(r.ms / 1000).toFixed(1)} | ${Math.round(sent / (r.ms / 1000)).toLocaleString('en-US')} | ${perEvent(r.cpu.cli)}, ${perEvent(r.cpu.server)} (${perEvent(r.cpu.serverMain)}), ${perEvent(r.cpu.postgres)} | ${r.probe.ok}, ${r.probe.failed}, ${r.probe.p99} / ${r.probe.max} |`,
      );
  } finally {
    await server.stop();
  }
} finally {
  if (values.keep === undefined) fs.rmSync(dataDir, { recursive: true, force: true });
}
