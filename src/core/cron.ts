import { Cron } from 'croner';

/** PostHog's default: queued person-event deletions run weekly, Sunday 05:00 UTC. */
export const DEFAULT_EVENT_DELETION_SCHEDULE = '0 5 * * 0';

/** Whether croner reads the pattern (in UTC); the configuration refuses a schedule that does not. */
export const isValidCron = (pattern: string): boolean => {
  try {
    new Cron(pattern, { timezone: 'UTC', paused: true }).stop();
    return true;
  } catch {
    return false;
  }
};
