import type { Readable } from 'node:stream';
import { type Stringifier, stringify } from 'csv-stringify';
import { type PersonRecord, toPersonView } from '../../commands/persons/model/personView.ts';
import type { PersonWhere } from '../../projections/persons/personFilters.ts';
import type { PersonsReader } from '../../projections/persons/personsReader.ts';
import { csvCast } from '../shared/csvCells.ts';

const FIXED = ['id', 'uuid', 'name', 'distinct_ids', 'is_identified', 'created_at'] as const;
const PAGE = 1000;

/** A property value as a cell: strings as they are, anything else as JSON, missing as empty. */
const cell = (v: unknown) => (v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v));

/** One person as a CSV row: the fixed columns, then one `properties.<key>` column per key. */
export function csvRow(person: PersonRecord, keys: readonly string[]): string[] {
  const view = toPersonView(person);
  return [
    String(view.id),
    view.uuid,
    view.name,
    JSON.stringify(view.distinct_ids),
    String(view.is_identified),
    view.created_at,
    ...keys.map((k) => cell(view.properties[k])),
  ];
}

export const csvHeader = (keys: readonly string[]) => [
  ...FIXED,
  ...keys.map((k) => `properties.${k}`),
];

/** How long an export waits for a client that stopped reading before it gives the connection back. */
export const EXPORT_STALL_TIMEOUT_MS = 30_000;

/**
 * Resolves true when the stream wants more, false when it was closed (the client went away, maybe
 * before this was asked) or the client has not read for `stallMs`: then the export ends.
 */
const writable = (out: Stringifier, stallMs: number) =>
  new Promise<boolean>((resolve) => {
    if (out.destroyed) return resolve(false);
    const done = (ok: boolean) => {
      clearTimeout(timer);
      out.off('drain', onDrain);
      out.off('close', onClose);
      resolve(ok);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    const timer = setTimeout(() => done(false), stallMs);
    out.on('drain', onDrain);
    out.on('close', onClose);
  });

/**
 * The persons list as a streamed CSV (PostHog's export columns: id, uuid, name, distinct_ids,
 * created_at and `properties.<key>`, plus is_identified). All of it is read from one snapshot
 * (REPEATABLE READ), so the header's property columns cover every row written, page by page,
 * with backpressure; a client that goes away ends the read.
 */
export async function personsCsvStream(
  persons: PersonsReader,
  where: PersonWhere,
  limit: number,
  offset: number,
  stallMs = EXPORT_STALL_TIMEOUT_MS,
): Promise<Readable> {
  const snapshot = await persons.snapshot();
  let keys: string[];
  try {
    await snapshot.checkRegexes(where.regexes);
    keys = await snapshot.propertyKeys(where, limit, offset);
  } catch (error) {
    await snapshot.end(false);
    throw error;
  }
  const out = stringify({ eof: true, cast: csvCast });
  out.write(csvHeader(keys));
  void (async () => {
    let failed: unknown;
    try {
      for (let done = 0; done < limit; ) {
        const want = Math.min(PAGE, limit - done);
        const rows = await snapshot.page(where, want, offset + done);
        for (const row of rows) {
          if (out.destroyed) return;
          if (!out.write(csvRow(row, keys)) && !(await writable(out, stallMs))) {
            out.destroy(); // a stalled client: end its response rather than hold a connection
            return;
          }
        }
        done += rows.length;
        if (rows.length < want) break;
      }
      out.end();
    } catch (error) {
      failed = error;
      out.destroy(error as Error);
    } finally {
      await snapshot.end(failed === undefined);
    }
  })();
  return out;
}
