import { describe, expect, it } from 'vitest';
import {
  applyOrPark,
  isTransientFailure,
  ReadModelBehind,
} from '../../src/processing/poisonEvents.ts';

/** A store that applies batches all-or-nothing and refuses any batch holding a poison event. */
function storeRefusing(
  poison: ReadonlySet<number>,
  outage: { failures: number } = { failures: 0 },
) {
  const applied: number[] = [];
  const parked: { event: number; attempts: number }[] = [];
  const tries: number[][] = [];
  const handling = {
    apply: async (events: number[]) => {
      tries.push(events);
      if (outage.failures > 0) {
        outage.failures--;
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
          code: 'ECONNREFUSED',
        });
      }
      const bad = events.find((e) => poison.has(e));
      if (bad !== undefined)
        throw Object.assign(new Error(`invalid input syntax for type json (event ${bad})`), {
          code: '22P02',
        });
      applied.push(...events);
    },
    park: async (event: number, _error: unknown, attempts: number) => {
      parked.push({ event, attempts });
    },
    attempts: 3,
    retryTransient: true,
    delay: async () => undefined,
  };
  return { applied, parked, tries, handling };
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('applyOrPark', () => {
  it('applies a healthy batch in one try', async () => {
    const s = storeRefusing(new Set());
    await applyOrPark(range(500), s.handling);
    expect(s.applied).toEqual(range(500));
    expect(s.tries).toHaveLength(1);
    expect(s.parked).toEqual([]);
  });

  it('parks only the events that fail alone, and applies every other event in log order', async () => {
    const s = storeRefusing(new Set([17, 18, 311]));
    await applyOrPark(range(500), s.handling);
    expect(s.parked).toEqual([
      { event: 17, attempts: 3 },
      { event: 18, attempts: 3 },
      { event: 311, attempts: 3 },
    ]);
    expect(s.applied).toEqual(range(500).filter((e) => ![17, 18, 311].includes(e)));
    // split, not one event at a time: a few dozen tries for 500 events
    expect(s.tries.length).toBeLessThan(60);
  });

  it('retries an outage for as long as it lasts, at any size, and parks nothing', async () => {
    const outage = { failures: 25 };
    const s = storeRefusing(new Set(), outage);
    await applyOrPark(range(100), s.handling);
    expect(s.applied).toEqual(range(100));
    expect(s.parked).toEqual([]);
    expect(s.tries.every((t) => t.length === 100)).toBe(true);
  });

  it('throws an outage when told not to retry it (a rebuild fails instead)', async () => {
    const s = storeRefusing(new Set(), { failures: 1 });
    await expect(applyOrPark(range(10), { ...s.handling, retryTransient: false })).rejects.toThrow(
      /ECONNREFUSED/,
    );
    expect(s.parked).toEqual([]);
  });

  it('stops retrying once the caller is stopping', async () => {
    const s = storeRefusing(new Set([3]));
    await expect(applyOrPark(range(10), { ...s.handling, stopping: () => true })).rejects.toThrow(
      /invalid input/,
    );
    expect(s.parked).toEqual([]);
  });
});

describe('isTransientFailure', () => {
  it('tells the stores failing from events failing', () => {
    const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });
    // the stores: connections, disk, shutdown, deadlock, timeouts, another read model behind
    for (const e of [
      withCode('ECONNREFUSED'),
      withCode('ENOSPC'),
      withCode('53100'),
      withCode('57P01'),
      withCode('40P01'),
      withCode('57014'),
      withCode('241'), // ClickHouse MEMORY_LIMIT_EXCEEDED
      withCode('252'), // TOO_MANY_PARTS
      withCode('42P01'), // a table dropped under the read model: the schema, not the event
      new Error('Code: 60. DB::Exception: Table default.events does not exist. (UNKNOWN_TABLE)'),
      new Error('Connection terminated unexpectedly'),
      new ReadModelBehind('waiting for the persons projection'),
    ])
      expect(isTransientFailure(e), String(e)).toBe(true);
    // the events: values refused, constraints, a bug
    for (const e of [
      withCode('22P02'),
      withCode('54000'),
      withCode('23505'),
      withCode('27'), // ClickHouse CANNOT_PARSE_INPUT_ASSERTION_FAILED
      new Error('chDB: insert failed', {
        cause: new Error('Code: 41. DB::Exception: Cannot parse datetime (CANNOT_PARSE_DATETIME)'),
      }),
      new TypeError("Cannot read properties of undefined (reading 'x')"),
      'a string',
    ])
      expect(isTransientFailure(e), String(e)).toBe(false);
  });
});
