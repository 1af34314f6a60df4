import { parkedView } from '../../queries/projections/readModelStatus.ts';
import type { AppContext } from '../appContext.ts';
import { withTransaction } from '../db/postgres.ts';
import {
  deleteParked,
  errorText,
  type ParkedEvent,
  parkedEventsReader,
  recordParked,
} from '../processing/parkedEvents.ts';
import { checkpointId, lockCheckpoint, type PgProjection } from '../processing/projection.ts';
import { NotFound, UsageError } from './errors.ts';
import type { Options } from './usage.ts';

type Answer = { json: unknown; text: string };

/**
 * `parked list | replay | drop`: the events read models set aside. Replay applies them to the
 * read model as it is now (out of log order, as EventStoreDB replays parked messages): right for
 * a cause that is fixed (a bug, a constraint), and a parked event that fails again stays parked.
 * Where log order matters, `rebuild` applies them in order instead and parks what still fails.
 */
export async function parkedCommand(
  ctx: AppContext,
  verb: string | undefined,
  readModel: string | undefined,
  o: Options,
  /** the Postgres read models as this process's settings build them (`pgProjectionsFor`) */
  pgProjections: readonly PgProjection[],
): Promise<Answer> {
  const reader = parkedEventsReader(ctx.pool);
  if (verb === 'list') {
    const parked = await reader.list(
      readModel ? { readModel, limit: 100_000 } : { limit: 100_000 },
    );
    const text =
      parked.length === 0
        ? `no parked events${readModel ? ` for ${readModel}` : ''}`
        : parked
            .map(
              (p) =>
                `${p.readModel}  position ${p.position}  ${p.eventType}  stream ${p.stream}  parked ${p.parkedAt.toISOString()} after ${p.attempts} attempts\n  ${p.error}`,
            )
            .join('\n');
    return { json: { parked: parked.map(parkedView) }, text };
  }
  if (verb !== 'replay' && verb !== 'drop')
    throw new UsageError(`unknown command "parked ${verb ?? ''}"`);
  if (!readModel) throw new UsageError('missing the read model');
  const chosen = await chosenEvents(reader, readModel, o);
  if (verb === 'drop') {
    const dropped = await withTransaction(ctx.pool, (tx) =>
      deleteParked(
        tx,
        readModel,
        chosen.map((p) => p.position),
      ),
    );
    return {
      json: { dropped },
      text: `dropped ${dropped} parked event${dropped === 1 ? '' : 's'} of ${readModel} (they stay in the log; a rebuild parks them again if they still fail)`,
    };
  }
  const projection = pgProjections.find((p) => p.name === readModel);
  if (!projection)
    throw new UsageError(
      `replay applies events to Postgres read models; for ${readModel} run \`npm run cli -- rebuild events\`, which applies them again in log order and parks what still fails`,
    );
  const results: { position: string; replayed: boolean; error?: string }[] = [];
  for (const p of chosen) {
    const [event] = await ctx.store.readAll({
      after: p.position === 0n ? 'start' : p.position - 1n,
      maxCount: 1,
    });
    if (!event || event.position !== p.position) {
      results.push({ position: String(p.position), replayed: false, error: 'not in the log' });
      continue;
    }
    try {
      // under the checkpoint lock: never at the same time as the read model's runner
      await withTransaction(ctx.pool, async (tx) => {
        await lockCheckpoint(tx, checkpointId(projection));
        // and its partitions' runners (persons with INGESTION_WORKERS > 1), which draw the same ids
        for (const part of projection.partitions ?? [])
          await lockCheckpoint(tx, checkpointId(part));
        await projection.handle([event], tx);
        await deleteParked(tx, readModel, [p.position]);
      });
      results.push({ position: String(p.position), replayed: true });
    } catch (error) {
      await withTransaction(ctx.pool, (tx) =>
        recordParked(tx, readModel, event, error, p.attempts + 1),
      );
      results.push({ position: String(p.position), replayed: false, error: errorText(error) });
    }
  }
  const done = results.filter((r) => r.replayed).length;
  const text = [
    `replayed ${done} of ${results.length} parked event${results.length === 1 ? '' : 's'} of ${readModel}`,
    ...results
      .filter((r) => !r.replayed)
      .map((r) => `still parked: position ${r.position}: ${r.error}`),
  ].join('\n');
  return { json: { replayed: results }, text };
}

async function chosenEvents(
  reader: ReturnType<typeof parkedEventsReader>,
  readModel: string,
  o: Options,
): Promise<ParkedEvent[]> {
  if (!o.all && o.position === undefined)
    throw new UsageError('say which: --position <position> or --all');
  if (o.position !== undefined && !/^\d+$/.test(o.position))
    throw new UsageError('--position must be a log position');
  const parked = await reader.list({ readModel, limit: 100_000 });
  const chosen = o.all ? parked : parked.filter((p) => p.position === BigInt(o.position!));
  if (chosen.length === 0)
    throw new NotFound(
      o.all
        ? `no parked events for ${readModel}`
        : `no parked event of ${readModel} at position ${o.position}`,
    );
  return chosen;
}
