/**
 * bench/timeTravel: person time travel on a log full of other people's events.
 *   npm run bench:timetravel [-- --events 200000 --ids 20000 --heavy 50000 --projection-only]
 * Starts the service in this process (embedded Postgres under a temporary DATA_DIR, no ClickHouse),
 * appends `events` captured events of `ids` unrelated distinct ids straight to the log (with a few
 * identifies among them) and `heavy` events of one busy person, captures one person of interest (a
 * merge, $set, $unset) and a person of another project, lets the persons projection catch up, then
 * times over HTTP: as_of by id, as_of by uuid, properties_timeline, as_of for the other project's
 * person (404) and as_of for the busy person. While each request runs, a 5 ms timer measures the
 * longest event-loop stall of the process. `--projection-only` stops after the persons projection
 * has caught up (its time is the cost of writing the read model, time-travel index included).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { accessDeps } from '../commands/access/accessDeps.ts';
import { createProject } from '../commands/access/createProject.ts';
import type { EventCapturedData } from '../commands/capture/model/eventCaptured.ts';
import { captureStream } from '../commands/capture/model/eventCaptured.ts';
import { accessReader } from '../projections/access/accessReader.ts';
import { loadConfig } from '../src/config.ts';
import type { StreamAppend } from '../src/eventStore/eventStore.ts';
import { createService } from '../src/service.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '200000' },
    ids: { type: 'string', default: '20000' },
    heavy: { type: 'string', default: '50000' },
    'projection-only': { type: 'boolean', default: false },
  },
});
const total = Number(values.events);
const idCount = Number(values.ids);
const heavy = Number(values.heavy);

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-bench-tt-'));
const config = loadConfig({
  DATA_DIR: dataDir,
  PORT: '0',
  LOG_LEVEL: 'silent',
  API_RATE_LIMIT_PER_MINUTE: '0',
  INIT_PROJECT_API_KEY: 'phc_bench_tt_project_key',
  INIT_PERSONAL_API_KEY: 'phx_bench_tt_personal_key',
  READ_YOUR_WRITES_TIMEOUT_MS: '600000',
});
const service = await createService(config, { clickhouse: false });
const url = await service.app.listen({ port: 0, host: '127.0.0.1' });
const ctx = service.ctx;
const projectId = (await accessReader(ctx.pool).firstProjectId())!;

const api = async (p: string) => {
  const res = await fetch(`${url}${p}`, {
    headers: { authorization: `Bearer ${config.initPersonalApiKey}` },
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
};
const capture = async (apiKey: string, items: Record<string, unknown>[]) => {
  const res = await fetch(`${url}/batch/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: apiKey, batch: items }),
  });
  if (res.status !== 200) throw new Error(`capture: ${res.status} ${await res.text()}`);
};

function event(distinctId: string, i: number, name: string, properties: Record<string, unknown>) {
  const at = new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString();
  const data: EventCapturedData = {
    uuid: randomUUID(),
    projectId,
    event: name,
    distinctId,
    properties: {
      $browser: 'Chrome',
      $current_url: `https://example.com/${i % 50}`,
      ...properties,
    },
    timestamp: at,
    elementsChain: '',
    sentAt: null,
    receivedAt: at,
    ip: null,
  };
  return { type: 'EventCaptured', data, metadata: { projectId, occurredAt: at } };
}

const started = Date.now();
const BATCH = 5000;
for (let from = 0; from < total + heavy; from += BATCH) {
  const byStream = new Map<string, ReturnType<typeof event>[]>();
  for (let i = from; i < Math.min(total + heavy, from + BATCH); i++) {
    const n = i % idCount;
    const id = `bystander-${n}`;
    // the busy person's events are spread evenly through the log
    const e =
      i % Math.ceil((total + heavy) / Math.max(1, heavy)) === 3
        ? event('busy', i, '$pageview', { $set: { seen: i } })
        : i % 100 === 7
          ? event(`user-${n}`, i, '$identify', { $anon_distinct_id: id, $set: { email: `${n}@x` } })
          : event(id, i, '$pageview', { $set: { seen: i } });
    const stream = captureStream(projectId, e.data.distinctId);
    byStream.set(stream, [...(byStream.get(stream) ?? []), e]);
  }
  const appends: StreamAppend[] = [...byStream].map(([streamName, events]) => ({
    streamName,
    events,
    expectedRevision: 'any',
  }));
  await ctx.store.appendMany(appends);
}
console.log(`appended ${total + heavy} events in ${((Date.now() - started) / 1000).toFixed(1)} s`);

const other = await createProject(accessDeps(ctx), {
  name: 'other',
  ownerUserId: 1,
});
await capture(other.projectApiKey, [
  { event: '$pageview', timestamp: '2024-02-01T00:00:00Z', properties: { distinct_id: 'foreign' } },
]);
const t = (d: number) => new Date(Date.UTC(2024, 5, d)).toISOString();
for (const item of [
  { event: '$pageview', distinct_id: 'anon-x', ts: t(1), props: { $set: { plan: 'free' } } },
  { event: 'signed_up', distinct_id: 'user-x', ts: t(2), props: { $set: { email: 'x@x' } } },
  { event: '$identify', distinct_id: 'user-x', ts: t(3), props: { $anon_distinct_id: 'anon-x' } },
  { event: '$set', distinct_id: 'anon-x', ts: t(4), props: { $set: { plan: 'pro' } } },
  { event: '$pageview', distinct_id: 'user-x', ts: t(5), props: { $unset: ['plan'] } },
]) {
  await capture(config.initProjectApiKey!, [
    {
      event: item.event,
      timestamp: item.ts,
      properties: { distinct_id: item.distinct_id, $geoip_disable: true, ...item.props },
    },
  ]);
}
const catchUp = Date.now();
const head = await ctx.store.headPosition();
await service.runners.get('persons')!.waitFor(head, 3_600_000);
console.log(`persons projection caught up in ${((Date.now() - catchUp) / 1000).toFixed(1)} s`);
if (values['projection-only']) {
  await service.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
}

const live = await api(`/api/projects/${projectId}/persons/?distinct_id=user-x`);
const person = live.body.results[0] as { id: number; uuid: string };
const foreign = await api(`/api/projects/${other.projectId}/persons/?distinct_id=foreign`);
const foreignId = (foreign.body.results[0] as { id: number }).id;
const busy = await api(`/api/projects/${projectId}/persons/?distinct_id=busy`);
const busyId = (busy.body.results[0] as { id: number } | undefined)?.id;

async function timed(label: string, p: string) {
  let last = performance.now();
  let stall = 0;
  const probe = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last - 5);
    last = now;
  }, 5);
  const t0 = performance.now();
  const res = await api(p);
  const ms = performance.now() - t0;
  clearInterval(probe);
  console.log(
    `${label.padEnd(44)} ${String(res.status).padEnd(4)} ${ms.toFixed(0).padStart(7)} ms   longest stall ${stall.toFixed(0)} ms`,
  );
}

const asOf = encodeURIComponent(t(4));
await timed('as_of by id', `/api/projects/${projectId}/persons/${person.id}/?as_of=${asOf}`);
await timed('as_of by uuid', `/api/projects/${projectId}/persons/${person.uuid}/?as_of=${asOf}`);
await timed(
  'properties_timeline',
  `/api/projects/${projectId}/persons/${person.id}/properties_timeline/?date_from=2024-06-01&date_to=2024-06-30`,
);
await timed(
  "as_of, another project's person (404)",
  `/api/projects/${projectId}/persons/${foreignId}/?as_of=${asOf}`,
);

if (busyId !== undefined) {
  const events = (await ctx.store.readStream(captureStream(projectId, 'busy'))).length;
  await timed(
    `as_of, a person with ${events} events`,
    `/api/projects/${projectId}/persons/${busyId}/?as_of=${encodeURIComponent('2030-01-01T00:00:00Z')}`,
  );
}

await service.close();
fs.rmSync(dataDir, { recursive: true, force: true });
