import type { RecordedEvent } from '../core/event.ts';
import type { AllFilter } from '../eventStore/eventStore.ts';
import type { ClickHouse } from '../runtime/clickhouse.ts';

/**
 * A read model in ClickHouse. ClickHouse has no transaction to share with the checkpoint, so
 * `insert` must be idempotent for a given dedup token: the runner re-sends a batch with the same
 * token after a crash and ClickHouse drops the block if it already landed.
 */
export type ChProjection = Readonly<{
  name: string;
  version: number;
  filter: AllFilter;
  /** CREATE statements; run at start, each with `database` as the target */
  ddl: (database: string) => string[];
  /** drops the tables (for a rebuild from 0) */
  drop: (database: string) => string[];
  insert: (ch: ClickHouse, events: readonly RecordedEvent[], dedupToken: string) => Promise<void>;
}>;

export const chCheckpointId = (p: ChProjection) => `clickhouse:${p.name}@${p.version}`;
