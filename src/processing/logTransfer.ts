import fs from 'node:fs';
import readline from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import type { RecordedEvent } from '../core/event.ts';
import type { EventStore, StreamAppend } from '../eventStore/eventStore.ts';

const PAGE = 5_000;

/** One exported event: everything an append needs to recreate it, plus where it was. */
type ExportedEvent = {
  id: string;
  stream: string;
  type: string;
  data: unknown;
  metadata: RecordedEvent['metadata'];
  position: string;
  recordedAt: string;
};

export type TransferProgress = Readonly<{ events: number; position: bigint; head: bigint }>;

/**
 * Writes the log (positions `from`…`to`, inclusive) as gzipped NDJSON, one event a line in log
 * order. The log is the source of truth: this file and `importLog` are the backup and restore.
 */
export async function exportLog(
  store: EventStore,
  file: string,
  range: { from?: bigint; to?: bigint } = {},
  onProgress?: (p: TransferProgress) => void,
): Promise<{ events: number }> {
  const head = range.to ?? (await store.headPosition());
  let events = 0;
  async function* lines() {
    let after = range.from !== undefined ? range.from - 1n : -1n;
    for (;;) {
      const page = await store.readAll({
        after: after < 0n ? 'start' : after,
        maxCount: PAGE,
      });
      for (const e of page) {
        if (e.position > head) return;
        const line: ExportedEvent = {
          id: e.id,
          stream: e.streamName,
          type: e.type,
          data: e.data,
          metadata: e.metadata,
          position: e.position.toString(),
          recordedAt: e.recordedAt.toISOString(),
        };
        events++;
        yield `${JSON.stringify(line)}\n`;
      }
      if (page.length < PAGE) return;
      after = page[page.length - 1]!.position;
      onProgress?.({ events, position: after, head });
    }
  }
  await pipeline(lines, createGzip(), fs.createWriteStream(file));
  onProgress?.({ events, position: head, head });
  return { events };
}

/**
 * Appends an export's events in their order, each to its stream with its id: into an empty log it
 * recreates every stream with the same revisions, and events already in the log (a second import,
 * an overlapping range) are skipped by id. Read models are then rebuilt from it.
 */
export async function importLog(
  store: EventStore,
  file: string,
  onProgress?: (p: TransferProgress) => void,
): Promise<{ events: number }> {
  const input = readline.createInterface({
    input: fs.createReadStream(file).pipe(createGunzip()),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  let batch: StreamAppend[] = [];
  let inBatch = 0;
  let events = 0;
  let position = -1n;
  const flush = async () => {
    if (inBatch === 0) return;
    await store.appendMany(batch);
    events += inBatch;
    batch = [];
    inBatch = 0;
    onProgress?.({ events, position, head: position });
  };
  let line = 0;
  for await (const text of input) {
    line++;
    if (text.trim() === '') continue;
    let e: ExportedEvent;
    try {
      e = JSON.parse(text) as ExportedEvent;
    } catch {
      throw new Error(`${file}: line ${line} is not JSON`);
    }
    if (typeof e.id !== 'string' || typeof e.stream !== 'string' || typeof e.type !== 'string')
      throw new Error(`${file}: line ${line} is not an exported event`);
    position = BigInt(e.position);
    // consecutive events of one stream share an entry; the entries keep the file's order
    const last = batch[batch.length - 1];
    const event = { id: e.id, type: e.type, data: e.data as never, metadata: e.metadata };
    if (last?.streamName === e.stream) (last.events as (typeof event)[]).push(event);
    else batch.push({ streamName: e.stream, events: [event], expectedRevision: 'any' });
    if (++inBatch >= PAGE) await flush();
  }
  await flush();
  return { events };
}
