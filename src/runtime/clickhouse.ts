import fs from 'node:fs';
import path from 'node:path';
import { type ClickHouseClient, createClient } from '@clickhouse/client';
import { type ChdbRawInsert, openChdbRawInsert, serverRawInsert } from './chdbRawInsert.ts';
import { statementScopedSettings } from './chdbSettings.ts';
import { requireOptional } from './optionalPackage.ts';

/** Input formats `insertRaw` takes: the binary ones the client's `insert` has no encoder for. */
export type RawInsertFormat =
  | 'RowBinary'
  | 'Native'
  | 'TabSeparated'
  | 'JSONEachRow'
  | 'JSONCompactEachRow';

export type ClickHouse = Readonly<{
  client: ClickHouseClient;
  /** every statement names its tables as `${database}.table` */
  database: string;
  embedded: boolean;
  /**
   * Inserts `body`, already encoded in `format`, into `table` (`${database}.name`, as every
   * statement names it: a copy of this object for another database writes there) with per-insert
   * `settings`: chDB reads the bytes from a file (`INSERT … FROM INFILE`, chdbRawInsert.ts; the
   * client's Connection would decode them to text and append them to the statement), a server
   * gets them as the body of `exec`.
   * Errors are ClickHouse errors with `code` and `type`, as the client's.
   */
  insertRaw(
    table: string,
    columns: readonly string[],
    format: RawInsertFormat,
    body: Buffer,
    settings: Readonly<Record<string, string | number | undefined>>,
  ): Promise<void>;
  close(): Promise<void>;
}>;

/**
 * chDB allows one data directory per process, so every embedded client of a process shares one
 * session (tests put each service in a database of its own on it); the last close ends it.
 */
const shared = new Map<
  string,
  { client: ClickHouseClient; rawInsert: ChdbRawInsert; users: number }
>();

/**
 * One client type for both runtimes: a ClickHouse server by URL, or embedded chDB plugged into the
 * same @clickhouse/client through its Connection interface, so every query is the same SQL.
 */
export async function openClickHouse(
  url: string | undefined,
  chdbPath: string,
  database: string,
): Promise<ClickHouse> {
  let client: ClickHouseClient;
  let release: () => Promise<void>;
  let rawInsert: ChdbRawInsert;
  if (url) {
    client = createClient({ url, clickhouse_settings: { date_time_input_format: 'best_effort' } });
    release = () => client.close();
    rawInsert = serverRawInsert(client);
  } else {
    const dir = path.resolve(chdbPath);
    let entry = shared.get(dir) ?? [...shared.values()][0];
    if (!entry) {
      fs.mkdirSync(dir, { recursive: true });
      // chdb/connection is CommonJS; loaded only here, a server that uses a URL never needs it.
      // typed here: chdb is optional, absent from the server-stack (Docker) build
      const { createChdbConnection } = requireOptional<{
        createChdbConnection(options: { path: string }): unknown;
      }>(import.meta.url, 'chdb/connection', 'Set CLICKHOUSE_URL to use a ClickHouse server');
      const scoped = statementScopedSettings(createChdbConnection({ path: dir }) as object);
      entry = {
        client: createClient({
          connection: scoped.connection,
          clickhouse_settings: { date_time_input_format: 'best_effort' },
        } as Parameters<typeof createClient>[0]),
        rawInsert: openChdbRawInsert(dir),
        users: 0,
      };
      shared.set(dir, entry);
      const result = await entry.client.query({
        query: 'SELECT name, default FROM system.settings',
        format: 'JSONCompactEachRow',
      });
      scoped.loadDefaults(new Map((await result.json()) as [string, string][]));
    }
    const e = entry;
    e.users++;
    client = e.client;
    rawInsert = e.rawInsert;
    release = async () => {
      if (--e.users > 0) return;
      for (const [k, v] of shared) if (v === e) shared.delete(k);
      await e.rawInsert.close();
      await e.client.close();
    };
  }
  await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}` });
  return {
    client,
    database,
    embedded: !url,
    insertRaw: rawInsert.insert,
    close: release,
  };
}
