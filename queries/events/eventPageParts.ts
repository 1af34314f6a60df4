/**
 * An events-list page over the byte budget, sent whole: its parts are read and written one at a
 * time (queries/events/README.md "Byte budget").
 */
import { Readable } from 'node:stream';
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { type PagePart, readPagePart } from '../../projections/events/eventsReader.ts';
import type { AppContext } from '../../src/appContext.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { withPersons } from './eventPersons.ts';
import { type EventView, toEventView } from './eventView.ts';

/** JSON text streamed as it is produced (fastify sends a stream as is, past the response schema). */
export const jsonStream = (reply: FastifyReply, parts: AsyncIterable<string>) =>
  reply.type('application/json; charset=utf-8').send(Readable.from(parts));

/**
 * A page larger than the byte budget, as JSON text part by part: the server holds one part of
 * the page at a time, and the client still gets the whole page (`next` is known from the plan).
 * A failure after the first part ends the response early (the client sees broken JSON, never a
 * short page that looks whole).
 */
export async function* pageInParts(
  ctx: AppContext,
  ch: ClickHouse,
  projectId: number,
  next: string | null,
  first: EventView[],
  rest: readonly PagePart[],
  log: FastifyBaseLogger,
): AsyncGenerator<string> {
  yield `{"next":${JSON.stringify(next)},"results":[`;
  let written = 0;
  const write = async (events: EventView[]) => {
    const text = (await withPersons(ctx.pool, projectId, events))
      .map((e) => JSON.stringify(e))
      .join(',');
    const out = events.length > 0 && written > 0 ? `,${text}` : text;
    written += events.length;
    return out;
  };
  try {
    yield await write(first);
    for (const part of rest)
      yield await write((await readPagePart(ch, projectId, part)).map(toEventView));
  } catch (error) {
    log.error({ err: error }, 'events page failed after its first part');
    throw error;
  }
  yield ']}';
}
