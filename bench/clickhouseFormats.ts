/**
 * bench/clickhouseFormats: what the `events` insert costs in each input format ClickHouse reads
 * (issue #27, "ClickHouse gets a format it parses fast"), embedded chDB, in this one process.
 *   npm run bench:chformats [-- --rows 20000 --inserts 5 --rounds 3]
 * The same posthog-js-like events (bench/capture's `jsEvent` body as captured: ≈ 1.2 KB of
 * properties) are written `--inserts` times `--rows` rows into the real `events` DDL by each way,
 * the ways alternating within every round. Per way: Node's CPU per row to encode, the rest of
 * the main thread's (the client, the hand-over), chDB's (every other thread of the process:
 * the insert's parse and the part it writes) and an OPTIMIZE FINAL afterwards (the merges).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import type { EventCaptured } from '../commands/capture/model/eventCaptured.ts';
import { eventsProjection } from '../projections/events/eventsProjection.ts';
import {
  EVENT_COLUMNS,
  encodeEventsRowBinary,
  eventRow,
} from '../projections/events/eventsRowBinary.ts';
import type { RecordedEvent } from '../src/core/event.ts';
import {
  type ClickHouse,
  openClickHouse,
  type RawInsertFormat,
} from '../src/runtime/clickhouse.ts';
import { capturedData } from './support/capturedEvents.ts';
import { sampleCpu } from './support/cpu.ts';

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '20000' },
    inserts: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    only: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (args.help) {
  console.log(`bench/clickhouseFormats — CPU per row of the events insert, by input format (chDB)
usage: npm run bench:chformats -- [--rows N] [--inserts N] [--rounds N] [--only name,...]
  --rows     rows an insert (default 20000, a projection batch at replay size)
  --inserts  inserts per way and round (default 5)
  --rounds   rounds; the ways alternate within each (default 3)
  --only     only the ways whose names contain one of these comma-separated words
Prints, per way, the medians over rounds of CPU µs per row: encode (Node, building the body),
client (the rest of Node's main thread during the insert), chdb (all other threads: parse and
write), merge (OPTIMIZE FINAL of what was inserted), and total.`);
  process.exit(0);
}
const ROWS = Number(args.rows);
const INSERTS = Number(args.inserts);
const ROUNDS = Number(args.rounds);

/** bench/capture's posthog-js event, as capture stores it. */
const properties = (i: number) => capturedData(i).properties;

let position = 1n;
const batch = (n: number): RecordedEvent<EventCaptured>[] =>
  Array.from({ length: n }, (_, i) => {
    const at = new Date(Date.UTC(2024, 10, 24) + i * 1000).toISOString();
    const pos = position++;
    return {
      type: 'EventCaptured',
      id: crypto.randomUUID(),
      streamName: 'capture-1:x',
      revision: 0n,
      position: pos,
      metadata: { occurredAt: at },
      recordedAt: new Date(),
      data: {
        uuid: crypto.randomUUID(),
        projectId: 1,
        event: i % 4 === 0 ? '$pageview' : '$autocapture',
        distinctId: `0192f0c4-7b1e-7d3a-9c4e-${String(100000000000 + (i % 5000))}`,
        properties: properties(i),
        timestamp: at,
        elementsChain: i % 4 === 0 ? '' : 'button.btn:nth-child="1"text="Buy"',
        sentAt: null,
        receivedAt: at,
        ip: '81.2.69.160',
      },
    };
  });

/** TabSeparated escapes: the backslash, tab and newline (JSON text has no raw control characters). */
const tsv = (v: unknown) => {
  const s = String(v);
  return /[\\\t\n\r]/.test(s)
    ? s.replace(/[\\\t\n\r]/g, (c) =>
        c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r',
      )
    : s;
};
const rowsOf = (events: readonly RecordedEvent<EventCaptured>[]) => {
  const now = new Date().toISOString();
  return events.map((e) => eventRow(e, now));
};

type Way = Readonly<{
  name: string;
  /** builds the body; returns the insert that sends it */
  run(
    ch: ClickHouse,
    table: string,
    events: RecordedEvent<EventCaptured>[],
    token: string,
  ): () => Promise<void>;
}>;
const settings = (token: string) => ({
  insert_deduplication_token: token,
  date_time_input_format: 'best_effort' as const,
});
const text = (
  format: RawInsertFormat,
  encode: (e: RecordedEvent<EventCaptured>[]) => string,
): Way => ({
  name: `${format} insertRaw`,
  run: (ch, table, events, token) => {
    const body = Buffer.from(encode(events));
    return () =>
      ch.insertRaw(`${ch.database}.${table}`, EVENT_COLUMNS, format, body, settings(token));
  },
});
const WAYS: Way[] = [
  {
    name: 'eventsProjection.insert',
    run: (ch, _table, events, token) => () => eventsProjection.insert(ch, events, token),
  },
  {
    name: 'JSONCompactEachRow client',
    run: (ch, table, events, token) => {
      const values = rowsOf(events);
      return () =>
        ch.client
          .insert({
            table: `${ch.database}.${table}`,
            values,
            columns: [...EVENT_COLUMNS],
            format: 'JSONCompactEachRow',
            clickhouse_settings: settings(token),
          })
          .then(() => undefined);
    },
  },
  text('JSONCompactEachRow', (events) =>
    rowsOf(events)
      .map((r) => `${JSON.stringify(r)}\n`)
      .join(''),
  ),
  text('JSONEachRow', (events) =>
    rowsOf(events)
      .map((r) => `${JSON.stringify(Object.fromEntries(EVENT_COLUMNS.map((c, i) => [c, r[i]])))}\n`)
      .join(''),
  ),
  text('TabSeparated', (events) =>
    rowsOf(events)
      .map((r) => `${r.map(tsv).join('\t')}\n`)
      .join(''),
  ),
  {
    name: 'TabSeparated client',
    run: (ch, table, events, token) => {
      const body = Buffer.from(
        rowsOf(events)
          .map((r) => `${r.map(tsv).join('\t')}\n`)
          .join(''),
      );
      return () =>
        ch.client
          .insert({
            table: `${ch.database}.${table}`,
            values: Readable.from([body], { objectMode: false }),
            columns: [...EVENT_COLUMNS],
            format: 'TabSeparated',
            clickhouse_settings: settings(token),
          })
          .then(() => undefined);
    },
  },
  {
    name: 'RowBinary insertRaw',
    run: (ch, table, events, token) => {
      const body = encodeEventsRowBinary(events, new Date());
      if (!body) throw new Error('the bench events must all take the RowBinary path');
      return () =>
        ch
          .insertRaw(
            `${ch.database}.${table}`,
            EVENT_COLUMNS,
            'RowBinary',
            body.bytes,
            settings(token),
          )
          .finally(body.release);
    },
  },
  {
    // chdb's own raw insert (inline data: text formats only; names with `$` refused, so no column list)
    name: 'TabSeparated chdb rawInsert',
    run: (ch, table, events, token) => {
      const body = Buffer.from(
        rowsOf(events)
          .map((r) => `${r.map(tsv).join('\t')}\n`)
          .join(''),
      );
      return async () => {
        await chdbSession().insert({
          table: `${ch.database}.${table}`,
          values: body,
          format: 'TabSeparated',
          settings: settings(token),
        });
      };
    },
  },
];
type RawSession = { insert(params: object): Promise<unknown>; close(): void };
let session: RawSession | undefined;
const chdbSession = () => {
  session ??= new (
    createRequire(import.meta.url)('chdb') as { Session: new (p: string) => RawSession }
  ).Session(dir);
  return session;
};

const only = values(args.only);
function values(list: string | undefined) {
  return list ? list.split(',').map((w) => w.trim().toLowerCase()) : undefined;
}
const ways = WAYS.filter((w) => !only || only.some((word) => w.name.toLowerCase().includes(word)));

type Sample = { encode: number; client: number; chdb: number; merge: number; bytes: number };
const results = new Map<string, Sample[]>(ways.map((w) => [w.name, []]));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-chformats-'));
const batches = Array.from({ length: INSERTS }, () => batch(ROWS));
const rowsInAll = ROWS * INSERTS;
const perRow = (seconds: number) => (seconds * 1e6) / rowsInAll;
const pid = process.pid;
const log = (s: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);

for (let round = 0; round < ROUNDS; round++) {
  // alternate: each round starts one way further along
  const order = ways.map((_, i) => ways[(i + round) % ways.length]!);
  for (const way of order) {
    const database = `bench_chformats_${round}_${ways.indexOf(way)}`;
    const ch = await openClickHouse(undefined, dir, database);
    for (const statement of eventsProjection.ddl(database))
      await ch.client.command({ query: statement });
    let encode = 0;
    let bytes = 0;
    const start = sampleCpu(pid);
    for (const [i, events] of batches.entries()) {
      const before = sampleCpu(pid);
      const send = way.run(ch, 'events', events, `bench-${round}-${i}`);
      encode += sampleCpu(pid).mainThread - before.mainThread;
      await send();
    }
    const inserted = sampleCpu(pid);
    await ch.client.command({ query: `OPTIMIZE TABLE ${database}.events FINAL` });
    const merged = sampleCpu(pid);
    const stored = await ch.client.query({
      query: `SELECT count() AS n, sum(length(properties)) AS b FROM ${database}.events`,
      format: 'JSONEachRow',
    });
    const [{ n, b }] = (await stored.json()) as [{ n: string; b: string }];
    if (Number(n) !== rowsInAll)
      throw new Error(`${way.name}: ${n} rows stored, ${rowsInAll} sent`);
    bytes = Number(b) / rowsInAll;
    const main = inserted.mainThread - start.mainThread;
    results.get(way.name)!.push({
      encode: perRow(encode),
      client: perRow(main - encode),
      chdb: perRow(inserted.process - start.process - main),
      merge: perRow(merged.process - inserted.process),
      bytes,
    });
    log(
      `round ${round + 1} ${way.name}: ${JSON.stringify(results.get(way.name)!.at(-1), (_, v) => (typeof v === 'number' ? Math.round(v * 10) / 10 : v))}`,
    );
    await ch.client.command({ query: `DROP DATABASE ${database}` });
    await ch.close();
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};
const f = (x: number) => x.toFixed(1);
console.log(
  `\n${ROWS} rows an insert, ${INSERTS} inserts, ${ROUNDS} rounds (medians; CPU µs per row; ${os.cpus().length} cores)`,
);
console.log(
  '| way | encode (Node) | client (Node) | chDB insert | merge (OPTIMIZE FINAL) | total |',
);
console.log('|---|---|---|---|---|---|');
for (const way of ways) {
  const rs = results.get(way.name)!;
  const m = (k: keyof Sample) => median(rs.map((r) => r[k]));
  const total = median(rs.map((r) => r.encode + r.client + r.chdb + r.merge));
  console.log(
    `| ${way.name} | ${f(m('encode'))} | ${f(m('client'))} | ${f(m('chdb'))} | ${f(m('merge'))} | ${f(total)} |`,
  );
}
session?.close();
fs.rmSync(dir, { recursive: true, force: true });
