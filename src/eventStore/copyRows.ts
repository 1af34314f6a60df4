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
 * The lines as one buffer, each encoded straight into it: never one string of the whole batch. A
 * JavaScript string over 128 KB goes to V8's large-object space (allocated by itself, collected
 * only by a full collection), and turning a batch's concatenated lines into bytes cost ≈ 20 µs an
 * event that way (docs/PERFORMANCE.md, "Request bodies and COPY without large strings").
 */
export function copyBytes(lines: readonly string[]): Buffer {
  let size = 0;
  const sizes = lines.map((line) => {
    const n = Buffer.byteLength(line);
    size += n;
    return n;
  });
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const [i, line] of lines.entries()) at += out.write(line, at, sizes[i]!, 'utf8');
  return out;
}

/**
 * Writes `lines` (from `copyLine`) into `table (columns)` with COPY FROM STDIN on this client, so
 * inside its transaction. Postgres parses COPY text far quicker than a JSON document of rows
 * (docs/PERFORMANCE.md, "COPY into the log").
 */
export async function copyInto(
  client: pg.PoolClient,
  table: string,
  columns: readonly string[],
  lines: readonly string[],
): Promise<void> {
  const stream = client.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN`));
  stream.end(copyBytes(lines));
  await finished(stream);
}
