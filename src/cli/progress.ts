import cliProgress from 'cli-progress';

export type ProgressReporter = Readonly<{
  /** `done` of `total` (log positions), for the read model `name` */
  update(name: string, done: bigint, total: bigint): void;
  stop(): void;
}>;

const rate = (events: number, ms: number) => (ms > 0 ? Math.round((events * 1000) / ms) : 0);

/**
 * The time left at the rate so far; "–" before there is a rate. Ours, not cli-progress's
 * `{eta_formatted}`, which pads its "NULL" for an unknown ETA to two characters: "ETA LL".
 */
export const etaOf = (left: number, eventsPerSecond: number): string =>
  eventsPerSecond > 0 ? `${Math.ceil(left / eventsPerSecond)} s` : '–';

type Track = { started: number; first: bigint; lastLine: number; bar?: cliProgress.SingleBar };

/**
 * Progress of long work on stderr (stdout keeps the command's answer, `--json` included): a bar
 * per read model with position/head, events/s and ETA on a terminal, a plain line per read model
 * every few seconds otherwise (CI logs, `| tee`), so a rebuild is never silent. Read models
 * rebuilt side by side (`rebuild persons events`) each keep their own bar and rate.
 */
export function progressReporter(
  stream: NodeJS.WriteStream = process.stderr,
  lineEveryMs = 2_000,
): ProgressReporter {
  const tracks = new Map<string, Track>();
  let bars: cliProgress.MultiBar | undefined;
  return {
    update(name, done, total) {
      const now = Date.now();
      let track = tracks.get(name);
      if (!track) {
        track = { started: now, first: done, lastLine: now };
        tracks.set(name, track);
        if (stream.isTTY) {
          bars ??= new cliProgress.MultiBar(
            {
              stream,
              format: '{name} [{bar}] {value}/{total} positions | {speed} events/s | ETA {etaText}',
              hideCursor: true,
            },
            cliProgress.Presets.shades_classic,
          );
          track.bar = bars.create(Number(total), Number(done), { name, speed: 0, etaText: '–' });
        }
      }
      const speed = rate(Number(done - track.first), now - track.started);
      const etaText = etaOf(Number(total - done), speed);
      if (track.bar) {
        track.bar.setTotal(Number(total));
        track.bar.update(Number(done), { name, speed, etaText });
        return;
      }
      if (now - track.lastLine < lineEveryMs && done < total) return;
      track.lastLine = now;
      const eta = speed > 0 ? `, ETA ${etaText}` : '';
      const pct = total > 0n ? Math.floor((Number(done) * 100) / Number(total)) : 100;
      stream.write(`${name}: ${done}/${total} positions (${pct} %), ${speed} events/s${eta}\n`);
    },
    stop() {
      bars?.stop();
      bars = undefined;
    },
  };
}
