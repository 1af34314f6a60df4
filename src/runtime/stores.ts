import type pg from 'pg';
import { idSequencesSchema } from '../appContext.ts';
import type { Config } from '../config.ts';
import { createPool, withTransaction } from '../db/postgres.ts';
import { createEsdbEventStore } from '../eventStore/esdbEventStore.ts';
import { migrateEventLog } from '../eventStore/eventLogMigrations.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import { createPostgresEventStore } from '../eventStore/postgresEventStore.ts';
import { type LogInClickHouse, postgresLogInClickHouse } from '../processing/logInClickHouse.ts';
import { parkedEventsSchema } from '../processing/parkedEvents.ts';
import { checkpointsSchema, type PgProjection } from '../processing/projection.ts';
import { outdatedProjections } from '../processing/readModelVersions.ts';
import { rebuildRequestsSchema } from '../processing/rebuildRequests.ts';
import { startEmbeddedPostgres } from './embeddedPostgres.ts';

export type Stores = Readonly<{
  pool: pg.Pool;
  store: EventStore;
  /** which event log is in use, for logs and /_readyz */
  eventLog: 'postgres' | 'eventstoredb';
  /** the log as a ClickHouse on this machine reads it (a Postgres log reached by TCP) */
  logInClickHouse: LogInClickHouse | undefined;
  /** projections whose read model another version of them built: to rebuild before they run */
  outdated: ReadonlySet<string>;
  /** the embedded Postgres belongs to a server running on the same DATA_DIR (so does its chDB) */
  sharedWithRunningServer: boolean;
  close(): Promise<void>;
}>;

/** Opens Postgres (a server by URL, else embedded under DATA_DIR) and the event log, and migrates. */
export async function openStores(
  config: Config,
  projections: readonly PgProjection[],
): Promise<Stores> {
  const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres(config.dataDir);
  // Runners, the LISTEN connection, the ClickHouse lock and two group commits hold connections at once.
  const connectionString = config.databaseUrl ?? embedded!.connectionString;
  const pool = createPool(connectionString, 20, config.postgresTimeouts);
  let outdated = new Set<string>();
  try {
    if (!config.eventstoreUrl) await migrateEventLog(pool);
    await withTransaction(pool, async (tx) => {
      // Migrations of concurrent starters (server and CLI) must not interleave.
      await tx.query(`SELECT pg_advisory_xact_lock(hashtext('hogstream-migrate'))`);
      await tx.query(checkpointsSchema);
      await tx.query(rebuildRequestsSchema);
      await tx.query(parkedEventsSchema);
      await tx.query(idSequencesSchema);
      outdated = await outdatedProjections(tx, projections);
      // an outdated read model's tables are the old version's: its new DDL runs in the rebuild
      for (const p of projections) if (!outdated.has(p.name)) await tx.query(p.schema);
    });
  } catch (error) {
    await pool.end();
    await embedded?.stop();
    throw error;
  }
  const store = config.eventstoreUrl
    ? createEsdbEventStore(config.eventstoreUrl)
    : createPostgresEventStore(pool);
  return {
    pool,
    store,
    eventLog: config.eventstoreUrl ? 'eventstoredb' : 'postgres',
    logInClickHouse: config.eventstoreUrl ? undefined : postgresLogInClickHouse(connectionString),
    outdated,
    sharedWithRunningServer: embedded !== undefined && !embedded.owned,
    async close() {
      await store.close();
      await pool.end();
      await embedded?.stop();
    },
  };
}
