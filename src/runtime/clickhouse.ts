import fs from 'node:fs';
import path from 'node:path';
import { type ClickHouseClient, createClient } from '@clickhouse/client';
import { requireOptional } from './optionalPackage.ts';

export type ClickHouse = Readonly<{
  client: ClickHouseClient;
  /** every statement names its tables as `${database}.table` */
  database: string;
  embedded: boolean;
  /**
   * Inserts rows given as arrays in the table's column order (JSONCompactEachRow). Embedded chDB
   * takes them as one buffer parsed on its own threads (its "raw insert"), where the client's
   * path inlines the rows into the statement's text: 15–40 % quicker for the events table, and
   * the main thread is free meanwhile (issue #11). A server gets the client's insert.
   */
  insertRows(
    table: string,
    rows: readonly (readonly unknown[])[],
    settings: Readonly<Record<string, string | number>>,
  ): Promise<void>;
  close(): Promise<void>;
}>;

type RawInsert = (params: {
  table: string;
  format: 'JSONCompactEachRow';
  values: Buffer;
  settings: Readonly<Record<string, string | number>>;
}) => Promise<unknown>;

/**
 * chDB allows one data directory per process, so every embedded client of a process shares one
 * session (tests put each service in a database of its own on it); the last close ends it.
 */
const shared = new Map<string, { client: ClickHouseClient; rawInsert: RawInsert; users: number }>();

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
  let insertRows: ClickHouse['insertRows'];
  if (url) {
    const server = createClient({
      url,
      clickhouse_settings: { date_time_input_format: 'best_effort' },
    });
    client = server;
    release = () => server.close();
    insertRows = async (table, rows, settings) => {
      await server.insert({
        table,
        values: rows as unknown[][],
        format: 'JSONCompactEachRow',
        clickhouse_settings: settings,
      });
    };
  } else {
    const dir = path.resolve(chdbPath);
    let entry = shared.get(dir) ?? [...shared.values()][0];
    if (!entry) {
      fs.mkdirSync(dir, { recursive: true });
      // chdb/connection is CommonJS; loaded only here, a server that uses a URL never needs it.
      // typed here: chdb is optional, absent from the server-stack (Docker) build
      const { createChdbConnection } = requireOptional<{
        createChdbConnection(options: { path: string }): { chdb: { rawInsert: RawInsert } };
      }>(import.meta.url, 'chdb/connection', 'Set CLICKHOUSE_URL to use a ClickHouse server');
      const connection = createChdbConnection({ path: dir });
      entry = {
        client: createClient({
          connection,
          clickhouse_settings: { date_time_input_format: 'best_effort' },
        } as unknown as Parameters<typeof createClient>[0]),
        rawInsert: connection.chdb.rawInsert,
        users: 0,
      };
      shared.set(dir, entry);
    }
    const e = entry;
    e.users++;
    client = e.client;
    insertRows = async (table, rows, settings) => {
      if (rows.length === 0) return;
      let text = '';
      for (const row of rows) text += `${JSON.stringify(row)}\n`;
      await e.rawInsert({
        table,
        format: 'JSONCompactEachRow',
        values: Buffer.from(text),
        settings: { date_time_input_format: 'best_effort', ...settings },
      });
    };
    release = async () => {
      if (--e.users > 0) return;
      for (const [k, v] of shared) if (v === e) shared.delete(k);
      await e.client.close();
    };
  }
  await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}` });
  return { client, database, embedded: !url, insertRows, close: release };
}
