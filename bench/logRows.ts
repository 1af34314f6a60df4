/**
 * bench/logRows: what a row of the event log costs Postgres, by column type and storage.
 *   npx tsx bench/logRows.ts [--rows N --rounds N]
 * COPYs the same captured-event rows (bench/capture's posthog-js-like event as capture writes it
 * into the log, GeoIP and automatic person properties included, and a compact one without them)
 * into copies of the log's table that differ only in the data column: `json` (today), `text`, each with and without compression
 * (`toast_tuple_target = 8160` keeps a row inline, uncompressed). Prints the Postgres backend's CPU
 * (from /proc) per row, rounds alternating. Embedded Postgres in a temporary directory.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { CopyRows, copyInto } from '../src/eventStore/copyRows.ts';
import { startEmbeddedPostgres } from '../src/runtime/embeddedPostgres.ts';
import { capturedData } from './support/capturedEvents.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '3' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log('usage: npx tsx bench/logRows.ts [--rows N] [--rounds N]');
  process.exit(0);
}
const ROWS = Number(values.rows);
const ROUNDS = Number(values.rounds);

const now = new Date('2026-11-27T20:00:00.010Z');
const data = (i: number, enriched: boolean) => JSON.stringify(capturedData(i, enriched, now));

const cpuOf = (pid: number) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * (1e6 / 100); // µs (USER_HZ 100)
};

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-logrows-'));
const pgHandle = await startEmbeddedPostgres(dir);
const client = new pg.Client({ connectionString: pgHandle.connectionString });
await client.connect();
const pid = (await client.query<{ p: number }>('SELECT pg_backend_pid() AS p')).rows[0]!.p;
const variants = [
  { name: 'json, compressed (today)', type: 'json', inline: false },
  { name: 'json, uncompressed', type: 'json', inline: true },
  { name: 'text, compressed', type: 'text', inline: false },
  { name: 'text, uncompressed', type: 'text', inline: true },
] as const;
const bodies = {
  enriched: Array.from({ length: ROWS }, (_, i) => data(i, true)),
  compact: Array.from({ length: ROWS }, (_, i) => data(i, false)),
};
console.log(
  `bench/logRows: ${ROWS} rows a COPY, ${ROUNDS} rounds; enriched ${bodies.enriched[0]!.length} B, compact ${bodies.compact[0]!.length} B of JSON`,
);
const results = new Map<string, number[]>();
let round = 0;
for (let r = 0; r < ROUNDS; r++)
  for (const [shape, docs] of Object.entries(bodies))
    for (const v of variants) {
      const table = `log_${round++}`;
      await client.query(`CREATE TABLE ${table} (position bigint PRIMARY KEY, id uuid NOT NULL UNIQUE,
        stream_name text NOT NULL, revision bigint NOT NULL, type text NOT NULL, data ${v.type} NOT NULL,
        metadata json NOT NULL, recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        UNIQUE (stream_name, revision)) ${v.inline ? 'WITH (toast_tuple_target = 8160)' : ''}`);
      await client.query(`CREATE INDEX ON ${table} (type, position)`);
      const lines = new CopyRows();
      for (const [i, d] of docs.entries())
        lines.row([
          String(i),
          `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
          `capture-1:u${i % 10000}`,
          String(Math.floor(i / 10000)),
          'EventCaptured',
          d,
          '{"projectId":1,"occurredAt":"2026-11-27T20:00:00.010Z"}',
        ]);
      const before = cpuOf(pid);
      await client.query('BEGIN');
      await copyInto(
        client as unknown as pg.PoolClient,
        table,
        ['position', 'id', 'stream_name', 'revision', 'type', 'data', 'metadata'],
        lines,
      );
      await client.query('COMMIT');
      const perRow = (cpuOf(pid) - before) / ROWS;
      const size = (
        await client.query<{ s: string }>(`SELECT pg_total_relation_size('${table}') AS s`)
      ).rows[0]!.s;
      const key = `${shape} | ${v.name}`;
      results.set(key, [...(results.get(key) ?? []), perRow]);
      if (r === ROUNDS - 1) results.set(`${key} bytes/row`, [Number(size) / ROWS]);
      await client.query(`DROP TABLE ${table}`);
    }
console.log('| rows | column | Postgres CPU µs a row (rounds) | disk B a row |\n|---|---|---|---|');
for (const [shape] of Object.entries(bodies))
  for (const v of variants) {
    const key = `${shape} | ${v.name}`;
    console.log(
      `| ${shape} | ${v.name} | ${results
        .get(key)!
        .map((x) => x.toFixed(0))
        .join(', ')} | ${results.get(`${key} bytes/row`)![0]!.toFixed(0)} |`,
    );
  }
await client.end();
await pgHandle.stop();
fs.rmSync(dir, { recursive: true, force: true });
