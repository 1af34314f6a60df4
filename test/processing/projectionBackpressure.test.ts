import { describe, expect, it } from 'vitest';
import { projectionBackpressure } from '../../src/processing/projectionBackpressure.ts';
import type { ProjectionRunner, ProjectionStatus } from '../../src/processing/projectionRunner.ts';

/** A runner whose status the test sets (only `status` is read by the backpressure). */
const runner = (status: Partial<ProjectionStatus>) => {
  let current: ProjectionStatus = { name: 'persons', running: true, position: 0n, ...status };
  const r = { status: () => current } as unknown as ProjectionRunner;
  return { r, set: (s: Partial<ProjectionStatus>) => (current = { ...current, ...s }) };
};

const timed = async (wait: () => Promise<unknown>) => {
  const started = performance.now();
  await wait();
  return performance.now() - started;
};

const HEAD = async () => 1_000n;

describe('capture backpressure on the read models fed in memory', () => {
  it('waits while a read model is further behind than allowed, at most the wait', async () => {
    const { r } = runner({ position: 900n }); // 100 behind
    const admit = projectionBackpressure(new Map([['persons', r]]), ['persons'], HEAD, {
      maxBacklog: 50,
      maxWaitMs: 300,
    });
    const ms = await timed(admit);
    expect(ms).toBeGreaterThanOrEqual(290);
    expect(ms).toBeLessThan(2_000);
  });

  it('lets the request go as soon as the read model catches up', async () => {
    const { r, set } = runner({ position: 900n });
    const admit = projectionBackpressure(new Map([['persons', r]]), ['persons'], HEAD, {
      maxBacklog: 50,
      maxWaitMs: 10_000,
    });
    setTimeout(() => set({ position: 990n }), 100);
    const ms = await timed(admit);
    expect(ms).toBeGreaterThanOrEqual(90);
    expect(ms).toBeLessThan(2_000);
  });

  it.each([
    ['stopped', { running: false }],
    ['standing by', { standby: true }],
    ['failing on its stores', { lastError: 'connect ECONNREFUSED' }],
  ])('does not wait for a read model %s', async (_name, status) => {
    const { r } = runner({ position: 0n, ...status });
    const admit = projectionBackpressure(new Map([['persons', r]]), ['persons'], HEAD, {
      maxBacklog: 50,
      maxWaitMs: 10_000,
    });
    expect(await timed(admit)).toBeLessThan(1_000);
  });

  it('never waits when turned off (the default wait is 0)', async () => {
    const { r } = runner({ position: 0n });
    const admit = projectionBackpressure(new Map([['persons', r]]), ['persons'], HEAD, {
      maxBacklog: 50,
      maxWaitMs: 0,
    });
    expect(await timed(admit)).toBeLessThan(100);
  });

  it('lets waiting requests go in arrival order, with one look at the head a poll however many wait', async () => {
    const { r, set } = runner({ position: 900n });
    let looks = 0;
    const admit = projectionBackpressure(
      new Map([['persons', r]]),
      ['persons'],
      async () => {
        looks++;
        return 1_000n;
      },
      { maxBacklog: 50, maxWaitMs: 10_000 },
    );
    const order: number[] = [];
    const waits = Array.from({ length: 50 }, (_, i) => admit().then(() => order.push(i)));
    await new Promise((r) => setTimeout(r, 200));
    expect(order).toEqual([]);
    // 50 requests polling on their own would have looked ≈ 1,000 times in 200 ms
    expect(looks).toBeLessThan(40);
    set({ position: 990n });
    await Promise.all(waits);
    expect(order).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });

  it('queues a new request behind those already waiting', async () => {
    const { r, set } = runner({ position: 900n });
    const admit = projectionBackpressure(new Map([['persons', r]]), ['persons'], HEAD, {
      maxBacklog: 50,
      maxWaitMs: 10_000,
    });
    const first = admit();
    await new Promise((r) => setTimeout(r, 50));
    set({ position: 990n });
    // the backlog is within bounds now, but a request is still queued: the new one goes after it
    const order: string[] = [];
    await Promise.all([
      first.then(() => order.push('first')),
      admit().then(() => order.push('second')),
    ]);
    expect(order).toEqual(['first', 'second']);
  });

  it('lets requests go when the log head cannot be read (the append answers the outage)', async () => {
    const { r } = runner({ position: 0n });
    const admit = projectionBackpressure(
      new Map([['persons', r]]),
      ['persons'],
      async () => {
        throw new Error('connect ECONNREFUSED');
      },
      { maxBacklog: 50, maxWaitMs: 10_000 },
    );
    expect(await timed(admit)).toBeLessThan(1_000);
  });

  it('counts the requests let go but not yet appended against the backlog', async () => {
    const { r } = runner({ position: 1_000n }); // nothing behind
    const admit = projectionBackpressure(new Map([['persons', r]]), ['persons'], HEAD, {
      maxBacklog: 250,
      maxWaitMs: 10_000,
    });
    (await admit())(100); // requests of 100 events
    const a = await admit();
    const b = await admit(); // 2 × 100 in flight: within 250
    let cGone = false;
    const c = admit().then((done) => {
      cGone = true;
      return done;
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(cGone).toBe(false); // a third would make 300
    a(100);
    (await c)(100);
    b(100);
    expect(cGone).toBe(true);
  });
});
