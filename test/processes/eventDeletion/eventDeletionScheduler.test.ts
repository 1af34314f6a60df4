import { describe, expect, it } from 'vitest';
import { scheduleEventDeletions } from '../../../processes/eventDeletion/eventDeletionScheduler.ts';
import { ConfigError, loadConfig } from '../../../src/config.ts';
import { DEFAULT_EVENT_DELETION_SCHEDULE, isValidCron } from '../../../src/core/cron.ts';

describe('event deletion schedule', () => {
  it('defaults to Sunday 05:00 UTC, read in UTC whatever the local zone', async () => {
    expect(loadConfig({}).eventDeletionSchedule).toBe('0 5 * * 0');
    const s = scheduleEventDeletions(DEFAULT_EVENT_DELETION_SCHEDULE, async () => undefined);
    try {
      const next = s.nextRun()!;
      expect(next.getUTCDay()).toBe(0);
      expect([next.getUTCHours(), next.getUTCMinutes(), next.getUTCSeconds()]).toEqual([5, 0, 0]);
      expect(next.getTime()).toBeGreaterThan(Date.now());
      expect(next.getTime() - Date.now()).toBeLessThanOrEqual(7 * 24 * 3600 * 1000);
    } finally {
      await s.stop();
    }
  });

  it('EVENT_DELETION_SCHEDULE sets another cron; an invalid one stops the configuration with one line', () => {
    expect(loadConfig({ EVENT_DELETION_SCHEDULE: '30 2 * * *' }).eventDeletionSchedule).toBe(
      '30 2 * * *',
    );
    expect(isValidCron('61 5 * * 0')).toBe(false);
    expect(() => loadConfig({ EVENT_DELETION_SCHEDULE: 'every sunday' })).toThrow(ConfigError);
    expect(() => loadConfig({ EVENT_DELETION_SCHEDULE: 'every sunday' })).toThrow(
      /^invalid configuration: EVENT_DELETION_SCHEDULE: /,
    );
  });

  it('runs the job when due, keeps going after a failure, and stop waits for a run in progress', async () => {
    let runs = 0;
    let finished = 0;
    const logged: string[] = [];
    const s = scheduleEventDeletions(
      '* * * * * *',
      async () => {
        runs++;
        if (runs === 1) throw new Error('boom');
        await new Promise((r) => setTimeout(r, 300));
        finished++;
      },
      (m) => logged.push(m),
    );
    const deadline = Date.now() + 5000;
    while (runs < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await s.stop();
    expect(runs).toBeGreaterThanOrEqual(2);
    expect(finished).toBe(runs - 1); // the second run was waited for, not cut off
    expect(logged).toEqual(['event deletion run failed: boom']);
    const after = runs;
    await new Promise((r) => setTimeout(r, 1200));
    expect(runs).toBe(after);
  });
});
