import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { type ClickHouseClient, parseError } from '@clickhouse/client';
import { requireOptional } from './optionalPackage.ts';

/** settings of one insert; an undefined value is left out */
type Settings = Readonly<Record<string, string | number | undefined>>;

/** An insert of bytes already in the statement's format (`ClickHouse.insertRaw`). */
export type ChdbRawInsert = Readonly<{
  insert(
    table: string,
    columns: readonly string[],
    format: string,
    body: Buffer,
    settings: Settings,
  ): Promise<void>;
  close(): Promise<void>;
}>;

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const FORMAT = /^[A-Za-z]+$/;
const quoteName = (name: string) => `\`${name.replace(/[`\\]/g, '\\$&')}\``;
const literal = (value: string | number) =>
  typeof value === 'number' ? String(value) : `'${value.replace(/[\\']/g, '\\$&')}'`;

/**
 * `INSERT INTO t (`a`, …)[ FROM INFILE 'file'][ SETTINGS k = v, …] FORMAT f`: names quoted,
 * settings and the file as literals.
 */
export function insertStatement(
  table: string,
  columns: readonly string[],
  format: string,
  settings?: Settings,
  file?: string,
): string {
  if (!FORMAT.test(format)) throw new Error(`Not a format name: ${JSON.stringify(format)}`);
  const entries = Object.entries(settings ?? {}).filter(
    (entry): entry is [string, string | number] => entry[1] !== undefined,
  );
  for (const [key] of entries)
    if (!NAME.test(key)) throw new Error(`Not a setting name: ${JSON.stringify(key)}`);
  const set =
    entries.length === 0
      ? ''
      : ` SETTINGS ${entries.map(([k, v]) => `${k} = ${literal(v)}`).join(', ')}`;
  const from = file === undefined ? '' : ` FROM INFILE ${literal(file)}`;
  return `INSERT INTO ${table} (${columns.map(quoteName).join(', ')})${from}${set} FORMAT ${format}`;
}

/**
 * A ClickHouse server: the statement and its settings in the URL, the bytes as the body — `exec`
 * with `values`, the client's documented way for a format its `insert` does not encode (its
 * `insert` takes a byte stream only in CSV, TabSeparated, CustomSeparated and Parquet).
 */
export const serverRawInsert = (client: ClickHouseClient): ChdbRawInsert => ({
  async insert(table, columns, format, body, settings) {
    if (body.length === 0) return;
    const result = await client.exec({
      query: insertStatement(table, columns, format),
      values: Readable.from([body], { objectMode: false }),
      clickhouse_settings: Object.fromEntries(
        Object.entries(settings).filter(([, v]) => v !== undefined),
      ),
    });
    await finished(result.stream.resume());
  },
  close: async () => {},
});

type ChdbSession = { queryAsync(sql: string): Promise<unknown>; close(): void };

/**
 * Embedded chDB: the bytes written to a file that the statement reads (`INSERT … FROM INFILE`),
 * parsed by chDB on its own threads. chDB's raw insert cannot carry them: it takes the body as
 * inline data, which ends at the first empty line — a binary body is cut at its first two
 * newline bytes in a row (a UInt64 2570 is `0A 0A …`), and its public `Session.insert` refuses
 * binary formats for that reason. The client's Connection turns any body into text in the
 * statement. A session of our own on the same data directory (chDB allows several) keeps the
 * client's session-wide SETs (chdbSettings.ts) out of these inserts, whose settings are in their
 * statement. Rejections become ClickHouse errors as the client's Connection makes them, so
 * clickhouseErrors.ts and parked events read them alike.
 */
export function openChdbRawInsert(dir: string): ChdbRawInsert {
  let session: ChdbSession | undefined;
  let files: string | undefined;
  let next = 0;
  const open = () => {
    const { Session } = requireOptional<{ Session: new (path: string) => ChdbSession }>(
      import.meta.url,
      'chdb',
      'Set CLICKHOUSE_URL to use a ClickHouse server',
    );
    files = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-chdb-insert-'));
    session = new Session(dir);
    return session;
  };
  return {
    async insert(table, columns, format, body, settings) {
      if (body.length === 0) return;
      const chdb = session ?? open();
      const file = path.join(files!, `${next++}.${format}`);
      await fs.promises.writeFile(file, body);
      try {
        await chdb.queryAsync(insertStatement(table, columns, format, settings, file));
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        const mapped = parseError(message);
        if (mapped !== error) mapped.cause = error;
        throw mapped;
      } finally {
        await fs.promises.rm(file, { force: true });
      }
    },
    // chDB's Session.close waits for the statements still running on it
    async close() {
      session?.close();
      session = undefined;
      if (files) fs.rmSync(files, { recursive: true, force: true });
      files = undefined;
    },
  };
}
