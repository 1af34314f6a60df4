/**
 * bench/chMerges: what chDB spends writing the `events` table under capture-like inserts — the
 * inserts and the background merges they cause — with the table's settings and without them.
 *   npx tsx bench/chMerges.ts [--inserts 100 --rows 900 --pace-ms 200 --rounds 2]
 * bench/capture's posthog-js-like events (as the live projection encodes them, RowBinary) are
 * inserted `--inserts` times `--rows` rows, one insert every `--pace-ms` (the live projection's
 * batches under `/batch` load are ≈ 900 events every 200 ms), into a fresh `events` table; then
 * the bench waits until no merge has run for 3 s. Prints chDB's CPU per row (every thread of this
 * process but the main one) and the active parts left, for each way, alternating within rounds.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { EventCaptured } from '../commands/capture/model/eventCaptured.ts';
import { eventsProjection } from '../projections/events/eventsProjection.ts';
import { EVENT_COLUMNS, encodeEventsRowBinary } from '../projections/events/eventsRowBinary.ts';
import type { RecordedEvent } from '../src/core/event.ts';
import { createTables } from '../src/processing/clickhouseProjection.ts';
import { openClickHouse } from '../src/runtime/clickhouse.ts';
import { capturedData } from './support/capturedEvents.ts';
import { sampleCpu } from './support/cpu.ts';

const { values: args } = parseArgs({
  options: {
    inserts: { type: 'string', default: '100' },
    rows: { type: 'string', default: '900' },
    'pace-ms': { type: 'string', default: '200' },
    rounds: { type: 'string', default: '2' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (args.help) {
  console.log(`bench/chMerges — chDB CPU per row of the events table's inserts and merges
usage: npx tsx bench/chMerges.ts [--inserts N] [--rows N] [--pace-ms N] [--rounds N]
  --inserts  inserts per way and round (default 100)
  --rows     rows an insert (default 900)
  --pace-ms  one insert every this many ms (default 200)
  --rounds   rounds; the ways alternate within each (default 2)
Ways: "table settings" (as the projection creates the table), "defaults" (the DDL alone) and
"no merges" (the DDL, merges stopped: the inserts' own cost).`);
  process.exit(0);
}
const INSERTS = Number(args.inserts);
const ROWS = Number(args.rows);
const PACE = Number(args['pace-ms']);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-chmerges-'));
const ch = await openClickHouse(undefined, dir, 'chmerges');
const now = new Date();
let position = 1n;
const bodies = Array.from({ length: 20 }, (_, b) => {
  const events = Array.from({ length: ROWS }, (_, i) => ({
    type: 'EventCaptured' as const,
    id: crypto.randomUUID(),
    streamName: 'capture-1:x',
    revision: 0n,
    position: position++,
    metadata: { occurredAt: now.toISOString() },
    recordedAt: now,
    data: { ...capturedData(b * ROWS + i, true, now), uuid: crypto.randomUUID() },
  })) as RecordedEvent<EventCaptured>[];
  const encoded = encodeEventsRowBinary(events, now)!;
  const bytes = Buffer.from(encoded.bytes);
  encoded.release();
  return bytes;
});

/** CPU µs of every thread of this process but the main one: chDB's */
const chdbCpu = () => {
  const s = sampleCpu(process.pid);
  return (s.process - s.mainThread) * 1e6;
};
const rowsOf = async <T>(query: string) =>
  (await (await ch.client.query({ query, format: 'JSONEachRow' })).json()) as T[];

const ways = {
  'table settings': async (db: string) => createTables(ch, eventsProjection, db),
  defaults: async (db: string) => {
    for (const query of eventsProjection.ddl(db)) await ch.client.command({ query });
  },
  'no merges': async (db: string) => {
    for (const query of eventsProjection.ddl(db)) await ch.client.command({ query });
    await ch.client.command({ query: `SYSTEM STOP MERGES ${db}.events` });
  },
};
const results = new Map<string, string[]>();
let n = 0;
for (let round = 0; round < Number(args.rounds); round++)
  for (const [way, create] of Object.entries(ways)) {
    const db = `chmerges_${n++}`;
    await ch.client.command({ query: `CREATE DATABASE ${db}` });
    await create(db);
    const before = chdbCpu();
    for (let i = 0; i < INSERTS; i++) {
      const started = performance.now();
      await ch.insertRaw(`${db}.events`, EVENT_COLUMNS, 'RowBinary', bodies[i % bodies.length]!, {
        insert_deduplication_token: `${db}-${i}`,
      });
      const wait = PACE - (performance.now() - started);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    for (let quiet = 0; quiet < 3; ) {
      await new Promise((r) => setTimeout(r, 1000));
      const [m] = await rowsOf<{ c: string }>(
        `SELECT count() AS c FROM system.merges WHERE database = '${db}'`,
      );
      quiet = Number(m!.c) === 0 ? quiet + 1 : 0;
    }
    const perRow = (chdbCpu() - before) / (INSERTS * ROWS);
    const [parts] = await rowsOf<{ c: string; wide: string }>(
      `SELECT count() AS c, countIf(part_type = 'Wide') AS wide FROM system.parts WHERE database = '${db}' AND active`,
    );
    const cell = `${perRow.toFixed(1)} (${parts!.c} parts, ${parts!.wide} wide)`;
    results.set(way, [...(results.get(way) ?? []), cell]);
    console.error(`round ${round + 1}, ${way}: ${cell}`);
    await ch.client.command({ query: `DROP DATABASE ${db} SYNC` });
  }
console.log(
  `bench/chMerges: ${INSERTS} inserts of ${ROWS} rows, one every ${PACE} ms\n| way | chDB CPU µs a row (active parts left), by round |\n|---|---|`,
);
for (const [way, cells] of results) console.log(`| ${way} | ${cells.join('; ')} |`);
await ch.close();
fs.rmSync(dir, { recursive: true, force: true });
