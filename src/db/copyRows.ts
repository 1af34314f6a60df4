import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

/**
 * Appends rows to a table with `COPY … FROM STDIN (FORMAT csv)`: for a rebuild writing its fresh
 * shadow tables, several times quicker than an INSERT of a large JSON parameter (issue #11:
 * 100,000 persons took 3.3 s that way). Values: null is NULL, strings are quoted (so '' stays an
 * empty string), objects and arrays are written as JSON (for json/jsonb columns), dates as ISO
 * text, booleans as true/false, bigints as digits.
 */
export async function copyRows(
  client: pg.PoolClient,
  table: string,
  columns: readonly string[],
  rows: Iterable<readonly unknown[]>,
): Promise<number> {
  let count = 0;
  const source = stringify({
    quoted_string: true,
    cast: {
      boolean: (v) => (v ? 'true' : 'false'),
      bigint: (v) => v.toString(),
      date: (v) => v.toISOString(),
      object: (v) => ({ value: JSON.stringify(v), quote: true }),
    },
  });
  const copy = client.query(
    copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN (FORMAT csv)`),
  );
  const writing = pipeline(source, copy);
  for (const row of rows) {
    count++;
    if (!source.write(row as unknown[])) await new Promise((r) => source.once('drain', r));
  }
  source.end();
  await writing;
  return count;
}
