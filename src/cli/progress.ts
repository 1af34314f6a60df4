import cliProgress from 'cli-progress';

export type ProgressReporter = Readonly<{
  /** `done` of `total` (log positions), for the read model `name` */
  update(name: string, done: bigint, total: bigint): void;
  stop(): void;
}>;

const rate = (events: number, ms: number) => (ms > 0 ? Math.round((events * 1000) / ms) : 0);

/**
 * Progress of long work on stderr (stdout keeps the command's answer, `--json` included): a bar
 * with position/head, events/s and ETA on a terminal, a plain line every few seconds otherwise
 * (CI logs, `| tee`), so a rebuild is never silent.
 */
export function progressReporter(
  stream: NodeJS.WriteStream = process.stderr,
  lineEveryMs = 2_000,
): ProgressReporter {
  let bar: cliProgress.SingleBar | undefined;
  let current: { name: string; started: number; first: bigint; lastLine: number } | undefined;
  const finishBar = () => {
    bar?.stop();
    bar = undefined;
  };
  return {
    update(name, done, total) {
      const now = Date.now();
      if (current?.name !== name) {
        finishBar();
        current = { name, started: now, first: done, lastLine: now };
        if (stream.isTTY) {
          bar = new cliProgress.SingleBar(
            {
              stream,
              format: `${name} [{bar}] {value}/{total} positions | {speed} events/s | ETA {eta_formatted}`,
              etaBuffer: 50,
              hideCursor: true,
            },
            cliProgress.Presets.shades_classic,
          );
          bar.start(Number(total), Number(done), { speed: 0 });
        }
      }
      const speed = rate(Number(done - current.first), now - current.started);
      if (bar) {
        bar.setTotal(Number(total));
        bar.update(Number(done), { speed });
        return;
      }
      if (now - current.lastLine < lineEveryMs && done < total) return;
      current.lastLine = now;
      const left = Number(total - done);
      const eta = speed > 0 ? `, ETA ${Math.ceil(left / speed)} s` : '';
      const pct = total > 0n ? Math.floor((Number(done) * 100) / Number(total)) : 100;
      stream.write(`${name}: ${done}/${total} positions (${pct} %), ${speed} events/s${eta}\n`);
    },
    stop: finishBar,
  };
}
