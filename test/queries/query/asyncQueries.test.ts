import { describe, expect, it } from 'vitest';
import { AsyncQueries } from '../../../queries/query/asyncQueries.ts';
import { DomainFailure, invalidInput } from '../../../src/core/errors.ts';

const tick = () => new Promise((r) => setImmediate(r));

/** A query that finishes when told to. */
function controlled() {
  let finish!: (value: unknown) => void;
  let failWith!: (error: unknown) => void;
  let signal: AbortSignal | undefined;
  const run = (s: AbortSignal) => {
    signal = s;
    return new Promise((resolve, reject) => {
      finish = resolve;
      failWith = reject;
    });
  };
  return {
    run,
    finish: (v: unknown) => finish(v),
    fail: (e: unknown) => failWith(e),
    signal: () => signal,
  };
}

describe('asynchronous queries in memory', () => {
  it('bounds running queries per project (429), not across projects', async () => {
    const queries = new AsyncQueries({ maxRunning: 2, keepMinutes: 10, maxKept: 5 });
    const a = controlled();
    queries.start(1, 'a', a.run);
    queries.start(1, 'b', controlled().run);
    expect(() => queries.start(1, 'c', controlled().run)).toThrow(/at most 2/);
    expect(queries.start(2, 'c', controlled().run).complete).toBe(false);
    await tick();
    a.finish({ results: [[1]] });
    await tick();
    expect(queries.status(1, 'a')).toMatchObject({ complete: true, results: { results: [[1]] } });
    expect(queries.start(1, 'c', controlled().run).complete).toBe(false);
    expect(queries.status(2, 'a')).toBeUndefined();
  });

  it('keeps a result for keepMinutes, at most maxKept per project (oldest dropped)', async () => {
    let now = new Date('2024-05-01T00:00:00Z');
    const queries = new AsyncQueries({ maxRunning: 10, keepMinutes: 10, maxKept: 2 }, () => now);
    for (const id of ['q1', 'q2', 'q3']) {
      queries.start(1, id, async () => id);
      await tick();
      await tick();
      now = new Date(now.getTime() + 1_000);
    }
    expect(queries.status(1, 'q1')).toBeUndefined();
    expect(queries.status(1, 'q3')?.results).toBe('q3');
    now = new Date(now.getTime() + 10 * 60_000);
    expect(queries.status(1, 'q3')).toBeUndefined();
  });

  it("cancel aborts the query's signal and forgets it; a failure is described in the status", async () => {
    const queries = new AsyncQueries({ maxRunning: 10, keepMinutes: 10, maxKept: 5 });
    const q = controlled();
    queries.start(1, 'x', q.run);
    await tick();
    expect(queries.cancel(1, 'x')).toBe(true);
    expect(q.signal()?.aborted).toBe(true);
    expect(queries.status(1, 'x')).toBeUndefined();
    expect(queries.cancel(1, 'x')).toBe(false);

    const bad = controlled();
    queries.start(1, 'y', bad.run);
    await tick();
    bad.fail(new DomainFailure(invalidInput('Unknown function nope', 'query')));
    await tick();
    expect(queries.status(1, 'y')).toMatchObject({
      complete: true,
      error: true,
      error_message: 'Unknown function nope',
    });
  });
});
