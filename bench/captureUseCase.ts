/**
 * bench/captureUseCase: the CPU of capture's use case alone, in this process (no HTTP, no log):
 * decode → parse → normalise → enrich → the log's JSON text, for posthog-js-like /batch bodies.
 *   npx tsx bench/captureUseCase.ts [--requests N --rounds N]
 * The append is replaced by what the Postgres adapter does to each event before its COPY (its JSON
 * text, its COPY row), so the number is capture's share of "receive and parse" + "normalise and
 * enrich" and the append's encoding.
 */
import { parseArgs } from 'node:util';
import { captureEvents } from '../commands/capture/captureEvents.ts';
import { createProjectQuota } from '../commands/capture/projectQuota.ts';
import { openGeoIp } from '../ingress/geoip.ts';
import { CopyRows } from '../src/eventStore/copyRows.ts';
import type { GroupCommitter } from '../src/eventStore/groupCommit.ts';
import { DISTINCT_USERS, GEO, jsEvent, TOKEN } from './support/captureBodies.ts';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '300' },
    rounds: { type: 'string', default: '5' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log('usage: npx tsx bench/captureUseCase.ts [--requests N] [--rounds N]');
  process.exit(0);
}
// bench/capture's posthog-js-like events, each with its own uuid (a repeated one is skipped)
const bodies = Array.from({ length: 20 }, (_, r) =>
  Buffer.from(
    JSON.stringify({
      api_key: TOKEN,
      batch: Array.from({ length: 100 }, (_, i) => ({
        ...jsEvent((r * 100 + i) % DISTINCT_USERS, r * 100 + i),
        uuid: `0192f0c4-7b1e-7d3a-9c4e-${String(200000000000 + r * 100 + i)}`,
      })),
    }),
  ),
);
let sink = 0;
// what the Postgres adapter does with a batch before its COPY: each event's JSON, a row of COPY text
const committer: GroupCommitter = {
  append: async (batch) => {
    const rows = new CopyRows(batch.reduce((n, s) => n + s.events.length, 0) * 4096);
    for (const s of batch)
      for (const e of s.events) {
        const data = JSON.stringify(e.data);
        const metadata = JSON.stringify(e.metadata);
        rows.row(['1', e.id ?? '', s.streamName, '0', e.type, data, metadata]);
      }
    sink += rows.bytes().length;
    rows.release();
    return [];
  },
  drain: async () => undefined,
  stats: () => ({ commits: 0, appends: 0, events: 0 }),
};
const deps = {
  resolveProject: async () => ({ ok: true as const, projectId: 1 }),
  committer,
  geoip: await openGeoIp(),
  now: () => new Date(),
  limits: { maxEventBytes: 2 * 1024 * 1024, maxEventProperties: 10_000 },
  quota: createProjectQuota({ ratePerSecond: 0, burst: 0 }),
} as unknown as Parameters<typeof captureEvents>[0];
const requests = Number(values.requests);
const run = async () => {
  for (let i = 0; i < requests; i++) {
    const out = await captureEvents(
      deps,
      {
        method: 'POST',
        path: '/batch',
        query: {},
        headers: { 'content-type': 'application/json' },
        body: bodies[i % bodies.length]!,
      },
      GEO['x-forwarded-for'],
    );
    if (!out.ok) throw new Error(JSON.stringify(out));
  }
};
await run(); // warm-up
const perEvent: number[] = [];
for (let r = 0; r < Number(values.rounds); r++) {
  const before = process.cpuUsage();
  await run();
  const used = process.cpuUsage(before);
  perEvent.push((used.user + used.system) / (requests * 100));
}
console.log(
  `capture use case, posthog-js-like /batch of 100 (${bodies[0]!.length / 100} B an event), GeoIP on: CPU µs an event, rounds: ${perEvent.map((x) => x.toFixed(1)).join(', ')} (sink ${sink})`,
);
