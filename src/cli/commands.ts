import { accessDeps } from '../../commands/access/accessDeps.ts';
import { addProjectMember } from '../../commands/access/addProjectMember.ts';
import { createPersonalApiKey } from '../../commands/access/createPersonalApiKey.ts';
import { createProject } from '../../commands/access/createProject.ts';
import { createRole } from '../../commands/access/createRole.ts';
import { ensureUser } from '../../commands/access/ensureUser.ts';
import { ACCESS_LEVEL } from '../../commands/access/model/accessEvents.ts';
import { runEventDeletions } from '../../processes/eventDeletion/eventDeletionJob.ts';
import { chProjectionsFor, pgProjectionsFor } from '../../projections/registry.ts';
import { formatHistory, personHistory } from '../../queries/personTimeTravel/personHistory.ts';
import { timeTravelDeps } from '../../queries/personTimeTravel/personSlice.ts';
import { readModelStatus } from '../../queries/projections/readModelStatus.ts';
import { type AppContext, createAwaitProjection } from '../appContext.ts';
import { BOOTSTRAP_EMAIL } from '../bootstrap.ts';
import { type Config, loadConfig } from '../config.ts';
import { isKnownScope, SCOPE_OBJECTS } from '../core/principal.ts';
import { createClickHouseProjectionRunner } from '../processing/clickhouseProjectionRunner.ts';
import type { LogInClickHouse } from '../processing/logInClickHouse.ts';
import { createReadModelRunner } from '../processing/partitionedRunner.ts';
import { rebuildClickHouseModelsBeside } from '../processing/rebuildClickHouseBeside.ts';
import { rebuildClickHouseProjection } from '../processing/rebuildClickHouseProjection.ts';
import { type RebuildProgress, rebuildProjection } from '../processing/rebuildProjection.ts';
import { rebuildThroughServer } from '../processing/rebuildRequests.ts';
import { type ClickHouse, openClickHouse } from '../runtime/clickhouse.ts';
import { openStores } from '../runtime/stores.ts';
import { NotFound, required, UsageError } from './errors.ts';
import { keyCommand } from './keyCommands.ts';
import { transferLog } from './logCommands.ts';
import { parkedCommand } from './parkedCommands.ts';
import { progressReporter } from './progress.ts';
import type { Options } from './usage.ts';

async function run(
  ctx: AppContext,
  words: string[],
  o: Options,
  config: Config,
  serverRunning: boolean,
  /** the log as embedded chDB reads it, for `rebuild events` with no server running */
  log: LogInClickHouse | undefined,
): Promise<{ json: unknown; text: string }> {
  const [noun, verb, arg] = words;
  const pgProjections = pgProjectionsFor(config.ingestionWorkers);
  const ownerEmail = o.owner ?? BOOTSTRAP_EMAIL;
  const deps = accessDeps(ctx);
  if (noun === 'project' && verb === 'create') {
    const { userId } = await ensureUser(deps, { email: ownerEmail });
    const project = await createProject(deps, {
      name: required(o.name, 'name'),
      ownerUserId: userId,
    });
    const key = await createPersonalApiKey(deps, {
      userId,
      scopes: ['*'],
      scopedProjectIds: [project.projectId],
      label: 'cli',
    });
    const json = {
      project_id: project.projectId,
      project_api_key: project.projectApiKey,
      personal_api_key: key.personalApiKey,
    };
    return {
      json,
      text: `project ${json.project_id} created\n  project API key: ${json.project_api_key}\n  personal API key: ${json.personal_api_key}`,
    };
  }
  if (noun === 'personal-key' && verb === 'create') {
    const projectId = Number(required(o.project, 'project'));
    const scopes = required(o.scopes, 'scopes')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const bad = scopes.find((s) => !isKnownScope(s));
    if (!Number.isInteger(projectId)) throw new UsageError('--project must be a project id');
    if (bad)
      throw new UsageError(
        `invalid scope "${bad}": use <object>:read or <object>:write (objects: ${SCOPE_OBJECTS.join(', ')}), or *`,
      );
    if (!(await deps.access.projectExists(projectId)))
      throw new NotFound(`project ${projectId} does not exist`);
    const { userId } = await ensureUser(deps, { email: o.user ?? ownerEmail });
    await addProjectMember(deps, { projectId, userId, level: ACCESS_LEVEL.member });
    const key = await createPersonalApiKey(deps, {
      userId,
      scopes,
      scopedProjectIds: [projectId],
      label: o.label ?? 'cli',
    });
    const json = {
      id: key.keyId,
      personal_api_key: key.personalApiKey,
      user_id: userId,
      project_id: projectId,
      scopes,
    };
    return {
      json,
      text: `personal API key for user ${userId} (${scopes.join(', ')}): ${key.personalApiKey}`,
    };
  }
  if (
    (noun === 'personal-key' && ['list', 'roll', 'revoke'].includes(verb ?? '')) ||
    (noun === 'project' && verb === 'reset-token')
  )
    return keyCommand(ctx, noun, verb, arg, o);
  if (noun === 'role' && verb === 'create') {
    const level = Number(required(o['access-level'], 'access-level'));
    if (level !== 21 && level !== 37)
      throw new UsageError('--access-level must be 21 (view) or 37 (edit)');
    const members = [];
    for (const email of o.member ?? []) members.push((await ensureUser(deps, { email })).userId);
    const { roleId } = await createRole(deps, {
      name: required(o.name, 'name'),
      featureFlagsAccessLevel: level,
      memberUserIds: members,
      createdByUserId: null,
    });
    const json = {
      id: roleId,
      name: o.name,
      feature_flags_access_level: level,
      member_user_ids: members,
    };
    return { json, text: `role ${roleId} created` };
  }
  if (noun === 'rebuild') {
    const targets = new Set(words.slice(1));
    const all = targets.has('all');
    const chosen = pgProjections.filter((p) => all || targets.has(p.name));
    const clickhouseToo = all || targets.has('events');
    const unknown = [...targets].filter(
      (t) => t !== 'all' && t !== 'events' && !pgProjections.some((p) => p.name === t),
    );
    if (targets.size === 0 || unknown.length > 0)
      throw new UsageError(`unknown read model "${unknown[0] ?? ''}"`);
    const progress = progressReporter();
    const onProgress = (p: RebuildProgress) =>
      progress.update(p.name, p.position + 1n, p.head + 1n);
    type Rebuilt = {
      name: string;
      events?: number;
      position?: string;
      parked?: number;
      skipped?: string;
    };
    // The ClickHouse read models replay beside the Postgres ones: with embedded chDB a running
    // server does that work, so the two rebuilds use both cores (issue #11).
    const postgres = async (): Promise<Rebuilt[]> => {
      const done: Rebuilt[] = [];
      for (const p of chosen) {
        const r = await rebuildProjection(ctx.store, ctx.pool, p, {
          onProgress,
          log: (message) => process.stderr.write(`${message}\n`),
        });
        done.push({
          name: r.name,
          events: r.events,
          position: r.position.toString(),
          parked: r.parked,
        });
      }
      return done;
    };
    const clickhouse = async (): Promise<Rebuilt[]> =>
      clickhouseToo
        ? rebuildClickHouse(ctx, config, targets.has('events'), serverRunning, log, onProgress)
        : [];
    let rebuilt: Rebuilt[];
    try {
      const [pgDone, chDone] = await Promise.all([postgres(), clickhouse()]);
      rebuilt = [...pgDone, ...chDone];
    } finally {
      progress.stop();
    }
    const line = (r: Rebuilt) =>
      r.skipped
        ? `skipped ${r.name}: ${r.skipped}`
        : `rebuilt ${r.name}${r.events !== undefined ? ` from ${r.events} events` : ''} (position ${r.position})${r.parked ? `, ${r.parked} parked (npm run cli -- parked list ${r.name})` : ''}`;
    return { json: { rebuilt }, text: rebuilt.map(line).join('\n') };
  }
  if (noun === 'log') return transferLog(ctx, verb, o);
  if (noun === 'status') return readModelStatus(ctx);
  if (noun === 'parked') return parkedCommand(ctx, verb, arg, o, pgProjections);
  if (noun === 'run-deletions') {
    // The queued person-event deletions, now instead of at the next scheduled run.
    if (serverRunning && !config.clickhouseUrl) {
      throw new NotFound(
        'a server running on this DATA_DIR holds the embedded ClickHouse: stop it first, or let its schedule run the deletions',
      );
    }
    const clickhouse = await openClickHouse(
      config.clickhouseUrl,
      config.chdbPath,
      config.clickhouseDatabase,
    );
    try {
      const r = await runEventDeletions({
        store: ctx.store,
        pool: ctx.pool,
        clickhouse,
        awaitProjection: ctx.awaitProjection,
      });
      const json = { ran: r.ran, deleted: r.deleted, waiting: r.waiting };
      const text = !r.ran
        ? 'another process is running the deletions'
        : `${r.deleted} queued deletion(s) done, ${r.waiting} waiting for ClickHouse to catch up`;
      return { json, text };
    } finally {
      await clickhouse.close();
    }
  }
  if (noun === 'person' && verb === 'history') {
    const distinctId = arg ?? '';
    if (!distinctId) throw new UsageError('missing the distinct id');
    if (o.project !== undefined && !/^\d+$/.test(o.project))
      throw new UsageError('--project must be a project id');
    const projectId = o.project ? Number(o.project) : await deps.access.firstProjectId();
    if (projectId === undefined || (o.project && !(await deps.access.projectExists(projectId)))) {
      throw new UsageError(o.project ? `project ${o.project} does not exist` : 'no project yet');
    }
    const history = await personHistory(timeTravelDeps(ctx), projectId, distinctId);
    if (!history)
      throw new NotFound(`no person with distinct id "${distinctId}" in project ${projectId}`);
    return { json: history, text: formatHistory(history, distinctId) };
  }
  throw new UsageError(`unknown command "${words.join(' ')}"`);
}

/**
 * The ClickHouse read models, replayed from the log. With embedded chDB a running server holds
 * them, so it rebuilds them itself on request; with a ClickHouse server a running server holds the
 * projections' locks: asked for by name this fails, as part of `all` it is reported as skipped.
 */
async function rebuildClickHouse(
  ctx: AppContext,
  config: Config,
  required: boolean,
  serverRunning: boolean,
  log: LogInClickHouse | undefined,
  onProgress: (p: RebuildProgress) => void,
) {
  let clickhouse: ClickHouse | undefined;
  try {
    // chDB is in-process: a second process must not open the directory a running server uses, so
    // the running server rebuilds it, beside its live tables, and reports progress here.
    if (serverRunning && !config.clickhouseUrl)
      return await rebuildThroughServer(ctx.pool, 'events', { onProgress });
    clickhouse = await openClickHouse(
      config.clickhouseUrl,
      config.chdbPath,
      config.clickhouseDatabase,
    );
    const ch = clickhouse;
    const projections = chProjectionsFor(ctx.pool);
    // Embedded chDB, no server: the same replay as a server's, chDB reading the log itself; its
    // runners here only take part in the swap (started at the end, stopped before the CLI exits).
    if (ch.embedded && log) {
      const runners = new Map(
        projections.map((p) => [
          `clickhouse:${p.name}`,
          createClickHouseProjectionRunner(ctx.store, ctx.pool, ch, p),
        ]),
      );
      try {
        return await rebuildClickHouseModelsBeside({
          store: ctx.store,
          pool: ctx.pool,
          ch,
          projections,
          runners,
          log,
          onProgress,
        });
      } finally {
        for (const r of runners.values()) await r.stop();
      }
    }
    // The read models are independent: replayed side by side, one's log reads and inserts overlap
    // the other's (issue #11: 200,000 events in 38 s one after the other).
    const positions = new Map<string, bigint>();
    const name = projections.map((p) => `clickhouse:${p.name}`).join(' + ');
    const results = await Promise.all(
      projections.map((p) =>
        rebuildClickHouseProjection(ctx.store, ctx.pool, ch, p, {
          onProgress: (r) => {
            positions.set(r.name, r.position);
            if (positions.size < projections.length) return;
            const slowest = [...positions.values()].reduce((a, b) => (a < b ? a : b));
            onProgress({ ...r, name, position: slowest });
          },
        }),
      ),
    );
    return results.map((r) => ({ name: r.name, position: r.position.toString() }));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    if (required) throw new Error(`cannot rebuild the ClickHouse events table: ${reason}`);
    return [{ name: 'clickhouse:events', skipped: reason }];
  } finally {
    await clickhouse?.close();
  }
}

/**
 * How long the CLI waits for a Postgres session (at least): it is a batch job, not an answer to a
 * client that should get a 503 soon. A rebuild beside a server saturating the machine failed at
 * its save after all its work, opening its save connections ("timeout exceeded when trying to
 * connect", PG_CONNECT_TIMEOUT_MS's 2 s; seen three times under bench:rebuild, issue #27).
 */
const CLI_CONNECT_MS = 30_000;

/** Opens the stores (and the projections the command needs), runs the command and prints its answer. */
export async function runCommand(positionals: string[], values: Options): Promise<void> {
  const loaded = loadConfig();
  const config = {
    ...loaded,
    postgresTimeouts: {
      ...loaded.postgresTimeouts,
      connectMs: Math.max(loaded.postgresTimeouts.connectMs, CLI_CONNECT_MS),
    },
  };
  const pgProjections = pgProjectionsFor(config.ingestionWorkers);
  const stores = await openStores(config, pgProjections);
  // The CLI projects what it writes itself, so it works with or without a server on the same data.
  const runners = new Map(
    pgProjections.map(
      (p) => [p.name, createReadModelRunner(stores.store, stores.pool, p)] as const,
    ),
  );
  const rebuilding = positionals[0] === 'rebuild';
  // `person history` reads the log up to where the persons read model is (its time-travel index):
  // it brings that one up to date, and leaves the others alone.
  // `status` reports where the read models are; running them here would change the answer.
  // `parked` acts on read models under their checkpoint locks, beside a server that runs them.
  const readOnly = ['person', 'status', 'parked'].includes(positionals[0] ?? '');
  // An outdated read model (built by another version) is left to the server's upgrade, or to
  // `rebuild`: replaying from its new checkpoint into the old tables would fold everything twice.
  for (const r of runners.values())
    if (
      !rebuilding &&
      !stores.outdated.has(r.name) &&
      (!readOnly || (r.name === 'persons' && positionals[0] === 'person'))
    )
      await r.start();
  const ctx: AppContext = {
    store: stores.store,
    pool: stores.pool,
    now: () => new Date(),
    awaitProjection: createAwaitProjection(runners, 30_000),
  };
  try {
    const result = await run(
      ctx,
      positionals,
      values,
      config,
      stores.sharedWithRunningServer,
      stores.logInClickHouse,
    );
    console.log(values.json ? JSON.stringify(result.json) : result.text);
  } finally {
    for (const r of runners.values()) await r.stop();
    await stores.close();
  }
}
