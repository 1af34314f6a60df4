import { describe, expect, it } from 'vitest';
import { projectionBackpressure } from '../../src/processing/projectionBackpressure.ts';
import type { ProjectionRunner, ProjectionStatus } from '../../src/processing/projectionRunner.ts';

/** A runner whose status the test sets (only `status` is read by the backpressure). */
const runner = (status: Partial<ProjectionStatus>) => {
  let current: ProjectionStatus = { name: 'persons', running: true, position: 0n, ...status };
  const r = { status: () => current } as unknown as ProjectionRunner;
  return { r, set: (s: Partial<ProjectionStatus>) => (current = { ...current, ...s }) };
};

const timed = async (wait: () => Promise<void>) => {
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
});
