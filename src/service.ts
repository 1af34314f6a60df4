import type { FastifyInstance } from 'fastify';
import { captureDeps } from '../commands/capture/captureEvents.ts';
import { captureRoutes } from '../commands/capture/captureRoutes.ts';
import { cohortDefinitionEventTypes } from '../commands/cohorts/model/cohort.ts';
import { setHashKeyOverrides } from '../commands/featureFlags/setHashKeyOverrides.ts';
import { savedInsightRoutes } from '../commands/insights/savedInsightRoutes.ts';
import { openGeoIp } from '../ingress/geoip.ts';
import { forgetCachedProjectKeys } from '../ingress/resolveProject.ts';
import { cohortCalculations } from '../processes/cohortCalculation/cohortCalculationQueue.ts';
import { runEventDeletions } from '../processes/eventDeletion/eventDeletionJob.ts';
import { scheduleEventDeletions } from '../processes/eventDeletion/eventDeletionScheduler.ts';
import { accessProjection } from '../projections/access/accessProjection.ts';
import { accessReader } from '../projections/access/accessReader.ts';
import { watchProjectKeyResets } from '../projections/access/projectKeyResets.ts';
import { cohortsProjection } from '../projections/cohorts/cohortsProjection.ts';
import { cohortsReader } from '../projections/cohorts/cohortsReader.ts';
import { featureFlagsProjection } from '../projections/featureFlags/featureFlagsProjection.ts';
import { featureFlagsReader } from '../projections/featureFlags/featureFlagsReader.ts';
import {
  type FlagDefinitions,
  flagDefinitions,
} from '../projections/featureFlags/flagDefinitions.ts';
import { flagEvaluationService } from '../projections/featureFlags/flagEvaluationService.ts';
import { hashKeyOverridesReader } from '../projections/featureFlags/hashKeyOverridesReader.ts';
import { flagPersonsLoader } from '../projections/persons/flagPersonsLoader.ts';
import { personsReader } from '../projections/persons/personsReader.ts';
import { checkIngestionWorkers } from '../projections/persons/personsWorkers.ts';
import { chProjectionsFor, pgProjectionsFor, readModelEntries } from '../projections/registry.ts';
import { dashboardQueryRoutes } from '../queries/dashboards/dashboardQueryRoutes.ts';
import { decideDeps } from '../queries/decide/decide.ts';
import { decideRoutes } from '../queries/decide/decideRoutes.ts';
import { type EvaluationThreads, evaluationThreads } from '../queries/decide/evaluationThreads.ts';
import { awaitCapturedEvents, eventQueryRoutes } from '../queries/events/eventQueryRoutes.ts';
import { correlationRoutes } from '../queries/insights/correlationRoutes.ts';
import { funnelRoutes } from '../queries/insights/funnelRoutes.ts';
import { insightRoutes } from '../queries/insights/insightRoutes.ts';
import { pathRoutes } from '../queries/insights/pathRoutes.ts';
import { retentionRoutes } from '../queries/insights/retentionRoutes.ts';
import { savedInsightRetrieveRoutes } from '../queries/insights/savedInsightRetrieveRoutes.ts';
import { rebuildRoutes } from '../queries/projections/rebuildRoutes.ts';
import { queryRoutes } from '../queries/query/queryRoutes.ts';
import { remoteConfigRoutes } from '../queries/remoteConfig/remoteConfigRoutes.ts';
import { type AppContext, createAwaitProjection } from './appContext.ts';
import { type BootstrapResult, bootstrap } from './bootstrap.ts';
import type { Config } from './config.ts';
import { cachedFor } from './core/cachedFor.ts';
import { timedEventStore } from './eventStore/timedEventStore.ts';
import { buildApp } from './http/app.ts';
import { consoleRoutes } from './http/consoleRoutes.ts';
import { createMetrics } from './http/metrics.ts';
import { createClickHouseProjectionRunner } from './processing/clickhouseProjectionRunner.ts';
import { parkedEventsReader } from './processing/parkedEvents.ts';
import { createReadModelRunner } from './processing/partitionedRunner.ts';
import { projectionBackpressure } from './processing/projectionBackpressure.ts';
import { registerProjectionGauges } from './processing/projectionGauges.ts';
import type { ProjectionRunner } from './processing/projectionRunner.ts';
import { startRunners } from './processing/readModelVersions.ts';
import { rebuildClickHouseModelsBeside } from './processing/rebuildClickHouseBeside.ts';
import { serveRebuildRequests } from './processing/rebuildRequests.ts';
import { stuckProjections } from './processing/stuckProjections.ts';
import { routes } from './routes.ts';
import { type ClickHouse, openClickHouse } from './runtime/clickhouse.ts';
import { openStores, type Stores } from './runtime/stores.ts';

export type Service = Readonly<{
  app: FastifyInstance;
  ctx: AppContext;
  stores: Stores;
  runners: ReadonlyMap<string, ProjectionRunner>;
  /** the flag definitions cache of /decide (and local evaluation, flag actions) */
  flagDefinitions: FlagDefinitions;
  /** /decide's evaluation threads (absent with FLAG_EVALUATION_THREADS=0) */
  flagEvaluationThreads: EvaluationThreads | undefined;
  /**
   * Creates the default project and keys on an empty data dir (once; later calls answer the
   * first result). `createService` runs it unless `deferBootstrap`: the server runs it after its
   * port is bound, so a start that fails to listen creates nothing whose keys would be lost.
   */
  bootstrap(): Promise<BootstrapResult>;
  close(): Promise<void>;
}>;

/** Composition root: stores, projectors, bootstrap and the HTTP app, with an orderly close. */
export async function createService(
  config: Config,
  /** `now`: the service's clock (tests of relative-date flag filters fix it) */
  options: { clickhouse?: boolean; now?: () => Date; deferBootstrap?: boolean } = {},
): Promise<Service> {
  const pgProjections = pgProjectionsFor(config.ingestionWorkers);
  const stores = await openStores(config, pgProjections);
  // tables built with another INGESTION_WORKERS: refused here (an outdated one is rebuilt anyway)
  if (!stores.outdated.has('persons'))
    await checkIngestionWorkers(stores.pool, config.ingestionWorkers).catch(async (error) => {
      await stores.close();
      throw error;
    });
  const clickhouse: ClickHouse | undefined =
    options.clickhouse === false
      ? undefined
      : await openClickHouse(config.clickhouseUrl, config.chdbPath, config.clickhouseDatabase);
  // Built once: runners, readiness and rebuilds share the same ClickHouse projections.
  const chModels = clickhouse ? chProjectionsFor(stores.pool) : [];
  // A projection's failing batch (retried with backoff) is logged at error level: through the
  // app's logger once it exists, on stderr before.
  let logError: (message: string) => void = (message) => console.error(message);
  let logInfo: (message: string) => void = (message) => console.error(message);
  const runnerOptions = { log: (message: string) => logError(message) };
  const runners = new Map<string, ProjectionRunner>(
    pgProjections.map(
      (p) => [p.name, createReadModelRunner(stores.store, stores.pool, p, runnerOptions)] as const,
    ),
  );
  if (clickhouse) {
    for (const p of chModels) {
      const runner = createClickHouseProjectionRunner(
        stores.store,
        stores.pool,
        clickhouse,
        p,
        runnerOptions,
      );
      runners.set(runner.name, runner);
    }
  }
  const metrics = createMetrics();
  const ctx: AppContext = {
    store: timedEventStore(stores.store, (s) => metrics.appendDuration.observe(s)),
    pool: stores.pool,
    now: options.now ?? (() => new Date()),
    awaitProjection: createAwaitProjection(runners, config.readYourWritesTimeoutMs),
  };
  // Read models another version built are rebuilt blue/green before their runners start.
  const upgrading = await startRunners(stores, pgProjections, runners, {
    info: (m) => logInfo(m),
    error: (m) => logError(m),
  });
  // Bootstrap asks the read model whether a project exists: it must have caught up with the log first.
  await runners.get('access')!.caughtUp();
  let booted: Promise<BootstrapResult> | undefined;
  // Readiness waits for it: the server binds its port first, and a client that waits for
  // /_readyz and then uses INIT_PERSONAL_API_KEY must find the key there.
  let bootstrapped = false;
  const runBootstrap = () =>
    (booted ??= bootstrap(ctx, {
      projectApiKey: config.initProjectApiKey,
      personalApiKey: config.initPersonalApiKey,
    }).then((result) => {
      bootstrapped = true;
      return result;
    }));
  if (!options.deferBootstrap) await runBootstrap();

  const health = cachedFor(1_000, async () => {
    const failing: string[] = [];
    await withTimeout(stores.pool.query('SELECT 1'), 1_000).catch(() => failing.push('postgres'));
    if (clickhouse) {
      const ping = await withTimeout(clickhouse.client.ping(), 1_000).catch(() => ({
        success: false,
      }));
      if (!ping.success) failing.push('clickhouse');
    }
    // A read model that parked events serves, degraded: said here and in status, never a failure.
    const parked = failing.includes('postgres')
      ? new Map<string, number>()
      : await parkedEventsReader(stores.pool)
          .counts()
          .catch(() => new Map<string, number>());
    const degraded = [...parked].map(
      ([name, n]) => `projection ${name}: ${n} parked event${n === 1 ? '' : 's'}`,
    );
    return { ok: failing.length === 0, failing, degraded };
  });
  // Readiness = health (the databases, checked once a second at most) + the log + the projections.
  const stuck = stuckProjections(
    stores.store,
    new Map(readModelEntries(chModels).map((m) => [m.name, m.filter])),
    config.projectionStuckSeconds * 1000,
  );
  const readiness = async () => {
    const databases = await health();
    const failing = [...databases.failing];
    if (!bootstrapped) failing.push('bootstrap (the default project and its keys) not finished');
    await stores.store.headPosition().catch(() => failing.push(`event log (${stores.eventLog})`));
    for (const [name, r] of runners) {
      const s = r.status();
      if (s.standby) continue;
      if (!s.running || s.lastError)
        failing.push(`projection ${s.name}${s.lastError ? `: ${s.lastError}` : ''}`);
      else {
        const why = await stuck(name, s.position).catch(() => undefined);
        if (why) failing.push(why);
      }
    }
    return { ok: failing.length === 0, failing, degraded: databases.degraded };
  };
  const geoip = await openGeoIp();
  const definitions = flagDefinitions({
    store: stores.store,
    flags: featureFlagsReader(stores.pool),
    persons: personsReader(stores.pool),
    cohorts: cohortsReader(stores.pool),
    awaitEvent: (type, position) =>
      ctx.awaitProjection(
        (cohortDefinitionEventTypes as readonly string[]).includes(type)
          ? cohortsProjection
          : featureFlagsProjection,
        position,
      ),
    maxProjects: config.flagCacheMaxProjects,
  });
  await definitions.start();
  // A project key reset by the CLI or another server: capture and /decide forget the old key.
  const keyResets = await watchProjectKeyResets({
    store: stores.store,
    awaitApplied: (position) => ctx.awaitProjection(accessProjection, position),
    onReset: forgetCachedProjectKeys,
  });
  const overrides = hashKeyOverridesReader(stores.pool);
  const persons = personsReader(stores.pool);
  const evaluation = flagEvaluationService({
    definitions,
    persons: { ...persons, ...flagPersonsLoader(persons) },
    hashKeyOverrides: overrides.forDistinctIds,
    now: ctx.now,
    staticCohorts: cohortsReader(stores.pool).staticCohortsOf,
  });
  const continuity = { ...ctx, overrides, definitions };
  const threads =
    config.flagEvaluationThreads > 0
      ? evaluationThreads({
          threads: config.flagEvaluationThreads,
          maxProjects: config.flagCacheMaxProjects,
          withOverridesStore: true,
          now: ctx.now,
          maxInFlight: config.flagEvaluationLimits.queuePerThread,
          maxPerProject: config.flagEvaluationLimits.queuePerProject,
          // A quarter of the request's time once a thread starts a job: a request queued behind
          // another project's heavy jobs still has the rest (docs/RELIABILITY.md).
          runMs: Math.max(10, Math.floor(config.flagEvaluationLimits.deadlineMs / 4)),
          // app is assigned below; a thread can only fail once the server runs.
          onError: (error) => app.log.error({ err: error }, 'flag evaluation thread failed'),
        })
      : undefined;
  const decide = decideRoutes(
    decideDeps(
      accessReader(stores.pool),
      evaluation,
      geoip,
      (projectId, input) =>
        setHashKeyOverrides(continuity, projectId, input.distinctId, input.anonDistinctId!),
      threads ? { pool: threads, definitions } : undefined,
      config.flagEvaluationLimits.deadlineMs,
    ),
    config.decideBodyLimitBytes,
  );
  const capture = captureRoutes(
    {
      ...captureDeps(ctx, geoip, config.captureLimits, config.captureQuota),
      admit: projectionBackpressure(
        runners,
        ['persons', 'clickhouse:events', 'clickhouse:person_distinct_id'],
        () => ctx.store.headPosition(),
        config.captureBackpressure,
      ),
    },
    {
      capture: config.captureBodyLimitBytes,
      batch: config.batchBodyLimitBytes,
    },
    (accepted, dropped, droppedBy) => {
      metrics.capturedEvents.inc({ outcome: 'accepted' }, accepted);
      if (dropped > 0) metrics.capturedEvents.inc({ outcome: 'dropped' }, dropped);
      for (const [reason, n] of Object.entries(droppedBy)) metrics.droppedEvents.inc({ reason }, n);
    },
  );
  registerProjectionGauges(
    metrics,
    runners,
    new Map(readModelEntries(chModels).map((m) => [m.name, m.filter])),
    stores.store,
    stores.pool,
  );
  const calculations = cohortCalculations(
    { ...ctx, ...(clickhouse ? { clickhouse } : {}) },
    config.cohortCalculationSchedule,
    config.cohortRecalculationMinutes * 60_000,
    // app is assigned below; calculations run once the server does.
    (message) => app.log.error(message),
  );
  const app = await buildApp({
    auth: accessReader(stores.pool),
    apiRoutes: [
      ...routes(ctx, evaluation, definitions, (projectId, cohortId) =>
        calculations.request(projectId, cohortId),
      ),
      savedInsightRoutes(ctx),
      savedInsightRetrieveRoutes(ctx, clickhouse),
      ...(clickhouse
        ? [
            eventQueryRoutes(ctx, clickhouse, awaitCapturedEvents(ctx), config.eventsPageMaxBytes),
            insightRoutes(ctx, clickhouse),
            funnelRoutes(ctx, clickhouse),
            retentionRoutes(ctx, clickhouse),
            pathRoutes(ctx, clickhouse),
            correlationRoutes(ctx, clickhouse),
            rebuildRoutes(ctx),
            dashboardQueryRoutes(ctx, clickhouse),
            queryRoutes(
              { ctx, ch: clickhouse, hogql: { ch: clickhouse, pool: stores.pool } },
              { async: config.asyncQueryLimits, sync: config.queryGateLimits },
              metrics,
            ),
          ]
        : []),
    ],
    // The console (console/) at `/`: its pages and hashed assets, outside the /api scope.
    publicRoutes: [capture, decide, remoteConfigRoutes(accessReader(stores.pool)), consoleRoutes()],
    readiness,
    health,
    apiLimits: {
      requestsPerMinute: config.apiRateLimitPerMinute,
      requestsPerMinutePerAddress: config.apiRateLimitPerIpPerMinute,
    },
    connections: config.connections,
    logLevel: config.logLevel,
    logSummaryMs: config.logSummarySeconds * 1000,
    bodyLimit: config.batchBodyLimitBytes,
    metrics,
    metricsToken: config.metricsToken,
  });

  logError = (message) => app.log.error(message);
  logInfo = (message) => app.log.info(message);

  // Person-event deletions queued by DELETE persons/:id/?delete_events=true run on a schedule.
  const deletions = clickhouse
    ? scheduleEventDeletions(config.eventDeletionSchedule, () =>
        runEventDeletions({
          store: stores.store,
          pool: stores.pool,
          clickhouse,
          awaitProjection: ctx.awaitProjection,
        }),
      )
    : undefined;

  // Rebuilds the CLI asks for (`rebuild events` beside a running server: chDB is in this process).
  const stopRebuilds = clickhouse
    ? serveRebuildRequests({
        pool: stores.pool,
        run: (target, onProgress) => {
          if (target !== 'events') throw new Error(`a running server rebuilds "events" only`);
          return rebuildClickHouseModelsBeside({
            ...stores,
            ch: clickhouse,
            projections: chModels,
            runners,
            log: stores.logInClickHouse,
            onProgress,
          });
        },
        onError: (error) => app.log.error({ err: error }, 'rebuild failed'),
      })
    : undefined;

  let closing: Promise<void> | undefined;
  return {
    app,
    ctx,
    stores,
    runners,
    flagDefinitions: definitions,
    flagEvaluationThreads: threads,
    bootstrap: runBootstrap,
    close: () =>
      (closing ??= (async () => {
        await app.close(); // stops accepting; waits for in-flight requests and their appends
        await deletions?.stop(); // lets a deletion run in progress finish
        await stopRebuilds?.(); // lets a rebuild in progress finish
        await upgrading.stop(); // a read model upgrade starts again on the next start
        await calculations.stop(); // lets a cohort calculation in progress finish
        await definitions.stop();
        await keyResets.stop();
        await threads?.close();
        for (const r of runners.values()) await r.stop(); // last batches and checkpoints
        await clickhouse?.close();
        await stores.close(); // stops the embedded Postgres this process started
      })()),
  };
}

const withTimeout = <T>(promise: Promise<T>, ms: number): Promise<T> =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms).unref(),
    ),
  ]);
