import { finished } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

/**
 * COPY's text format: a row a line, tab-separated; a backslash, tab, newline or carriage return
 * inside a value is written as its escape. Values are text already (JSON documents, uuids, names).
 */
const SPECIAL = /[\\\t\n\r]/g;
const ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\\\',
  '\t': '\\t',
  '\n': '\\n',
  '\r': '\\r',
};
export const copyText = (value: string): string => value.replace(SPECIAL, (c) => ESCAPES[c]!);

/** One line of COPY text format (the caller escapes nothing). */
export const copyLine = (values: readonly string[]): string =>
  `${values.map(copyText).join('\t')}\n`;

/**
 * Writes `lines` (from `copyLine`) into `table (columns)` with COPY FROM STDIN on this client, so
 * inside its transaction. Postgres parses COPY text far quicker than a JSON document of rows
 * (docs/PERFORMANCE.md, "COPY into the log").
 */
export async function copyInto(
  client: pg.PoolClient,
  table: string,
  columns: readonly string[],
  lines: string,
): Promise<void> {
  const stream = client.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN`));
  stream.end(Buffer.from(lines));
  await finished(stream);
}
