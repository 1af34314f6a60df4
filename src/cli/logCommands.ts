import fs from 'node:fs';
import type { AppContext } from '../appContext.ts';
import { exportLog, importLog, type TransferProgress } from '../processing/logTransfer.ts';
import { NotFound, required, UsageError } from './errors.ts';
import { progressReporter } from './progress.ts';
import type { Options } from './usage.ts';

const position = (value: string | undefined, flag: string) => {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${flag} must be a log position`);
  return BigInt(value);
};

/** `log export` / `log import`: the log as gzipped NDJSON, the backup and restore of everything. */
export async function transferLog(ctx: AppContext, verb: string | undefined, o: Options) {
  const progress = progressReporter();
  const report = (p: TransferProgress) => progress.update('log', p.position + 1n, p.head + 1n);
  try {
    if (verb === 'export') {
      const file = required(o.to, 'to');
      const range = {
        ...(o.from !== undefined ? { from: position(o.from, 'from')! } : {}),
        ...(o.until !== undefined ? { to: position(o.until, 'until')! } : {}),
      };
      const r = await exportLog(ctx.store, file, range, report);
      return { json: { exported: r.events, file }, text: `exported ${r.events} events to ${file}` };
    }
    const file = required(o.from, 'from');
    if (!fs.existsSync(file)) throw new NotFound(`no file ${file}`);
    const r = await importLog(ctx.store, file, report);
    return {
      json: { imported: r.events, file },
      text: `imported ${r.events} events from ${file} (events already in the log are skipped); now: npm run cli -- rebuild all`,
    };
  } finally {
    progress.stop();
  }
}
