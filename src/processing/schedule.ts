import { Cron } from 'croner';

export type Schedule = Readonly<{
  nextRun(): Date | null;
  /** stops the timer and waits for a run in progress */
  stop(): Promise<void>;
}>;

/**
 * Runs `run` on a cron schedule read in UTC. A run still going when the next is due is not
 * overlapped (`protect`); a failure is logged and the schedule goes on.
 */
export function schedule(
  name: string,
  pattern: string,
  run: () => Promise<unknown>,
  log: (message: string) => void = (m) => console.error(m),
): Schedule {
  let current: Promise<unknown> = Promise.resolve();
  const job = new Cron(pattern, { timezone: 'UTC', protect: true, unref: true }, async () => {
    current = run().catch((error: unknown) =>
      log(`${name} failed: ${error instanceof Error ? error.message : String(error)}`),
    );
    await current;
  });
  return {
    nextRun: () => job.nextRun(),
    async stop() {
      job.stop();
      await current;
    },
  };
}
