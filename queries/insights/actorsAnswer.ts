import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type pg from 'pg';
import { z } from 'zod';
import { PersonView, toPersonView } from '../../commands/persons/model/personView.ts';
import { personBatchesReader } from '../../projections/persons/personBatchesReader.ts';
import { csvHeader, csvRow } from '../persons/personsCsv.ts';
import { csvCast } from '../shared/csvCells.ts';

/** PostHog's legacy actors answer: the persons of one data point, a page at a time. */
export const ActorsResponse = z
  .object({
    results: z.array(
      z.object({
        people: z.array(PersonView),
        count: z.number().int().describe('persons on this page'),
      }),
    ),
    next: z.string().nullable().describe('the next page (same parameters, offset moved on)'),
    previous: z.string().nullable(),
    missing_persons: z
      .number()
      .int()
      .describe('persons counted in ClickHouse but not (yet) in the persons read model'),
  })
  .meta({ id: 'Actors' });

export type ActorsPage = { personUuids: string[]; hasMore: boolean };
export type ActorsSource = (limit: number, offset: number) => Promise<ActorsPage>;

/** The persons of `uuids`, in that order. */
export async function peopleOf(pool: pg.Pool, projectId: number, uuids: readonly string[]) {
  const records = await personBatchesReader(pool).byUuids(projectId, uuids);
  const byUuid = new Map(records.map((r) => [r.uuid, r]));
  const ordered = uuids.flatMap((u) => byUuid.get(u) ?? []);
  return { records: ordered, missing: uuids.length - ordered.length };
}

export function links(request: FastifyRequest, limit: number, offset: number, hasMore: boolean) {
  const base = new URL(request.url, `${request.protocol}://${request.headers.host ?? 'localhost'}`);
  const at = (o: number) => {
    const url = new URL(base);
    url.searchParams.set('limit', String(limit));
    url.searchParams.set('offset', String(o));
    return url.toString();
  };
  return {
    next: hasMore ? at(offset + limit) : null,
    previous: offset > 0 ? at(Math.max(0, offset - limit)) : null,
  };
}

export async function actorsJson(
  request: FastifyRequest,
  pool: pg.Pool,
  projectId: number,
  source: ActorsSource,
  limit: number,
  offset: number,
) {
  const page = await source(limit, offset);
  const { records, missing } = await peopleOf(pool, projectId, page.personUuids);
  const people = records.map(toPersonView);
  return {
    results: [{ people, count: people.length }],
    ...links(request, limit, offset, page.hasMore),
    missing_persons: missing,
  };
}

/** Most actors one CSV export holds. */
export const ACTORS_CSV_MAX = 100_000;
const CSV_PAGE = 1_000;

/**
 * The actors as CSV (the persons export's columns), streamed a page of 1,000 at a time; the
 * property columns are the keys of the first page's persons.
 */
export function actorsCsv(pool: pg.Pool, projectId: number, source: ActorsSource, offset: number) {
  async function* rows() {
    let keys: string[] | undefined;
    for (let at = offset; at < offset + ACTORS_CSV_MAX; at += CSV_PAGE) {
      const page = await source(CSV_PAGE, at);
      const { records } = await peopleOf(pool, projectId, page.personUuids);
      if (!keys) {
        keys = [...new Set(records.flatMap((r) => Object.keys(r.properties)))].sort();
        yield stringify([csvHeader(keys)], { cast: csvCast });
      }
      const k = keys;
      yield stringify(
        records.map((r) => csvRow(r, k)),
        { cast: csvCast },
      );
      if (!page.hasMore) return;
    }
  }
  return Readable.from(rows());
}

/** JSON page or CSV stream, as `q.format` asks. */
export function answerActors(
  request: FastifyRequest,
  reply: FastifyReply,
  pool: pg.Pool,
  projectId: number,
  q: { format?: 'json' | 'csv' | undefined; limit: number; offset: number },
  source: ActorsSource,
) {
  if (q.format === 'csv')
    return reply.type('text/csv; charset=utf-8').send(actorsCsv(pool, projectId, source, q.offset));
  return actorsJson(request, pool, projectId, source, q.limit, q.offset);
}
