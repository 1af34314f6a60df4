import { type Schedule, schedule } from '../../src/processing/schedule.ts';

export type EventDeletionScheduler = Schedule;

/** The event deletion job on its cron schedule (UTC; runs never overlap; failures are logged). */
export const scheduleEventDeletions = (
  pattern: string,
  run: () => Promise<unknown>,
  log?: (message: string) => void,
): EventDeletionScheduler => schedule('event deletion run', pattern, run, log);
