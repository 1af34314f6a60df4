import type { EventCapturedData } from '../../commands/capture/model/eventCaptured.ts';
import type { PersonEvent } from '../../commands/persons/model/personEvents.ts';
import type { Event } from '../../src/core/event.ts';

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const utf8 = new TextEncoder();

/**
 * The ingestion partition of a distinct id (docs/SCALING.md): FNV-1a (32 bits) of the UTF-8 bytes
 * of `<project>:<distinct id>` — the capture stream's key — mod the number of partitions. A pure
 * function of the key, the same in every process and every release: the read model's ids and
 * checkpoints are laid out by it.
 */
export function partitionOf(projectId: number, distinctId: string, partitions: number): number {
  if (partitions <= 1) return 0;
  let hash = FNV_OFFSET;
  for (const byte of utf8.encode(`${projectId}:${distinctId}`)) {
    hash ^= byte;
    hash = Math.imul(hash, FNV_PRIME);
  }
  return (hash >>> 0) % partitions;
}

/**
 * A captured event goes to its distinct id's partition; a person management event
 * (`person-<project>:<uuid>`) to the partition of the distinct id it acts through, so it keeps its
 * place among that distinct id's captured events.
 */
export function partitionOfEvent(event: Event, partitions: number): number {
  const d =
    event.type === 'EventCaptured'
      ? (event.data as EventCapturedData)
      : (event as PersonEvent).data;
  return partitionOf(d.projectId, d.distinctId, partitions);
}

/** Where one partition's sequences of person ids and order stamps are. */
export type PartitionCounter = { personId: number; ord: number };

/**
 * The `persons_counters` rows of partition `i` of `n`: with one partition the names the read model
 * has always had; with several, each draws `i + 1, i + 1 + n, …` (the fold's `idStride`).
 */
export const counterNamesOf = (i: number, n: number): readonly [string, string] =>
  n === 1 ? ['person_id', 'ord'] : [`person_id#${i}`, `ord#${i}`];

/** The counters of `partition`, as stored (`rows`: name → value), or where its sequences begin. */
export function storedCounter(
  rows: ReadonlyMap<string, number>,
  partition: number,
  partitions: number,
): PartitionCounter {
  const [id, ord] = counterNamesOf(partition, partitions);
  return { personId: rows.get(id) ?? partition + 1, ord: rows.get(ord) ?? partition + 1 };
}

/** The rows to save for the partitions a batch drew from. */
export function counterRows(
  counters: ReadonlyMap<number, PartitionCounter>,
  partitions: number,
): [string, number][] {
  const rows: [string, number][] = [];
  for (const [i, c] of counters) {
    const [id, ord] = counterNamesOf(i, partitions);
    rows.push([id, c.personId], [ord, c.ord]);
  }
  return rows;
}

/**
 * The number of ingestion workers the persons tables were built with: the `workers` counter,
 * written by the first save of a read model built with several; absent, 1 if anything was saved.
 * Undefined: nothing built yet, any count may start.
 */
export function builtWith(counters: ReadonlyMap<string, number>): number | undefined {
  return counters.get('workers') ?? (counters.size > 0 ? 1 : undefined);
}

/**
 * Refused, not folded: ids and counters are laid out per partition, so tables built with another
 * count would get ids drawn twice. Retried, never parked (SQLSTATE 55000, object not in
 * prerequisite state: the store's, not the events'), and shown as the read model's error.
 */
export function assertBuiltWith(counters: ReadonlyMap<string, number>, workers: number): void {
  const built = builtWith(counters);
  if (built === undefined || built === workers) return;
  throw Object.assign(new Error(workersMismatch(built, workers)), { code: '55000' });
}

export const workersMismatch = (built: number, workers: number): string =>
  `INGESTION_WORKERS is ${workers}, but the persons read model was built with ${built} ingestion worker${built === 1 ? '' : 's'}: ` +
  `start with INGESTION_WORKERS=${built}, or stop the server and rebuild it for ${workers} with ` +
  `\`INGESTION_WORKERS=${workers} npm run cli -- rebuild persons\``;
