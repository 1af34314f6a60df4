import { describe, expect, it } from 'vitest';
import { createProjectQuota } from '../../../commands/capture/projectQuota.ts';

describe('project capture quota (token bucket per project)', () => {
  it('lets a burst through, then the sustained rate; projects have separate buckets', () => {
    let now = 0;
    const quota = createProjectQuota({ ratePerSecond: 10, burst: 20 }, () => now);
    expect(quota.take(1, 15)).toBe(15);
    expect(quota.take(1, 15)).toBe(5);
    expect(quota.take(2, 20)).toBe(20);
    now += 500; // half a second refills 5
    expect(quota.take(1, 100)).toBe(5);
    now += 10_000; // never above the burst
    expect(quota.take(1, 100)).toBe(20);
  });

  it('a rate of 0 means no limit', () => {
    const quota = createProjectQuota({ ratePerSecond: 0, burst: 1 });
    expect(quota.take(1, 1_000_000)).toBe(1_000_000);
  });
});
