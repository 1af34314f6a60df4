import { expect } from 'vitest';
import type { TestService } from './testService.ts';

type ReadModelState = { name: string; pending_events: string; parked_events: number };

/**
 * Waits until every read model has applied (or parked) everything in the log, as an operator
 * sees it: `GET /api/projections/` answering `pending_events: "0"` for each. Through the public
 * status, not a runner's internals, so it holds however ingestion hands events to the read
 * models (one subscription each, batches handed over in memory, several workers). Returns the
 * read models' states; fails naming the ones still behind after `ms`.
 */
export async function readModelsCaughtUp(t: TestService, ms = 30_000): Promise<ReadModelState[]> {
  const until = Date.now() + ms;
  for (;;) {
    const res = await t.api('GET', '/api/projections/');
    expect(res.status, res.text).toBe(200);
    const models = res.body.read_models as ReadModelState[];
    const behind = models.filter((m) => m.pending_events !== '0');
    if (behind.length === 0) return models;
    if (Date.now() > until) {
      expect(behind, `read models still behind after ${ms} ms`).toEqual([]);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
