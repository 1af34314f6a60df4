import { createHash } from 'node:crypto';
import { cohortDefinitionEventTypes } from '../../commands/cohorts/model/cohort.ts';
import { featureFlagEventTypes } from '../../commands/featureFlags/model/featureFlag.ts';
import type { FlagFilters } from '../../commands/featureFlags/model/flagFilters.ts';
import type { EventStore, Subscription } from '../../src/eventStore/eventStore.ts';
import type { CohortsReader } from '../cohorts/cohortsReader.ts';
import type { PersonsReader } from '../persons/personsReader.ts';
import type { CohortPropertyGroup, EvaluableFlag } from './evaluation/types.ts';
import type { FeatureFlagsReader, FlagRow } from './featureFlagsReader.ts';

/** One project's flag definitions as /decide, local evaluation and the flag actions read them. */
export type ProjectFlags = {
  projectId: number;
  /** not deleted, active and inactive, oldest first; a new array whenever a definition changes */
  flags: readonly EvaluableFlag[];
  rows: readonly FlagRow[];
  /** group type index (as a string) → group type name */
  groupTypeMapping: Record<string, string>;
  /** the project's live (dynamic) cohort definitions by id, in the local-evaluation shape */
  cohorts: Record<string, CohortPropertyGroup>;
  /** the project's live static cohorts (ids): decided from the person's memberships */
  staticCohortIds: ReadonlySet<string>;
  /** changes whenever a definition or the mapping changes: an ETag */
  version: string;
};

export type FlagDefinitions = {
  forProject(projectId: number): Promise<ProjectFlags>;
  start(): Promise<void>;
  stop(): Promise<void>;
};

export type FlagDefinitionsDeps = {
  store: Pick<EventStore, 'subscribeToAll' | 'headPosition'>;
  flags: Pick<FeatureFlagsReader, 'liveFlags'>;
  persons: Pick<PersonsReader, 'groupTypes'>;
  cohorts: Pick<CohortsReader, 'definitions' | 'staticIds'>;
  /** bounded wait until the read model the event belongs to (flags or cohorts) has applied it */
  awaitEvent: (type: string, position: bigint) => Promise<boolean>;
  /** projects kept (least recently used ones are dropped) */
  maxProjects?: number;
  /** while the subscription is down, an entry older than this is reloaded before use */
  fallbackTtlMs?: number;
  /** the group type mapping is reloaded (in the background) when older than this */
  mappingTtlMs?: number;
  now?: () => number;
};

export const DEFAULT_FLAG_CACHE_MAX_PROJECTS = 10_000;
const DEFAULT_FALLBACK_TTL_MS = 500;
const DEFAULT_MAPPING_TTL_MS = 1_000;

type Entry = {
  value: Promise<ProjectFlags>;
  loadedAt: number;
  mappingAt: number;
  mappingRefresh?: Promise<void>;
};

const toEvaluable = (row: FlagRow): EvaluableFlag => ({
  id: row.id,
  key: row.key,
  active: row.active,
  deleted: row.deleted,
  ensure_experience_continuity: row.ensure_experience_continuity,
  filters: row.filters as FlagFilters,
});

function versionOf(
  rows: readonly FlagRow[],
  mapping: Record<string, string>,
  cohorts: Record<string, CohortPropertyGroup>,
  staticCohortIds: ReadonlySet<string>,
): string {
  const h = createHash('sha1');
  h.update(JSON.stringify(cohorts));
  h.update(`${[...staticCohortIds].join(',')}\n`);
  for (const r of rows)
    h.update(`${r.id}\0${r.key}\0${r.active}\0${r.ensure_experience_continuity}\0`).update(
      `${JSON.stringify(r.filters)}\0${new Date(r.updated_at).getTime()}\n`,
    );
  h.update(JSON.stringify(mapping));
  return h.digest('hex').slice(0, 20);
}

const mappingOf = (types: { group_type: string; group_type_index: number }[]) =>
  Object.fromEntries(types.map((t) => [String(t.group_type_index), t.group_type]));

const sameMapping = (a: Record<string, string>, b: Record<string, string>) =>
  JSON.stringify(a) === JSON.stringify(b);

/**
 * In-memory cache of each project's flag definitions, loaded lazily and kept current by a
 * subscription to the flag events of the log: an event for project P waits (bounded) until the
 * read model has applied it, then reloads P. A failed subscription is recovered by the store;
 * meanwhile entries expire after `fallbackTtlMs`, so a PATCH reaches /decide within a second
 * whichever way.
 */
export function flagDefinitions(deps: FlagDefinitionsDeps): FlagDefinitions {
  const maxProjects = deps.maxProjects ?? DEFAULT_FLAG_CACHE_MAX_PROJECTS;
  const fallbackTtl = deps.fallbackTtlMs ?? DEFAULT_FALLBACK_TTL_MS;
  const mappingTtl = deps.mappingTtlMs ?? DEFAULT_MAPPING_TTL_MS;
  const now = deps.now ?? Date.now;
  const entries = new Map<number, Entry>();
  let subscription: Subscription | undefined;
  let live = false;

  async function load(projectId: number): Promise<ProjectFlags> {
    const [rows, types, cohorts, staticIds] = await Promise.all([
      deps.flags.liveFlags(projectId),
      deps.persons.groupTypes(projectId),
      deps.cohorts.definitions(projectId),
      deps.cohorts.staticIds(projectId),
    ]);
    const groupTypeMapping = mappingOf(types);
    const staticCohortIds = new Set(staticIds);
    return {
      projectId,
      flags: rows.map(toEvaluable),
      rows,
      groupTypeMapping,
      cohorts,
      staticCohortIds,
      version: versionOf(rows, groupTypeMapping, cohorts, staticCohortIds),
    };
  }

  function put(projectId: number): Entry {
    const at = now();
    const entry: Entry = { value: load(projectId), loadedAt: at, mappingAt: at };
    // A failed load is not kept: the next request tries again.
    entry.value.catch(() => {
      if (entries.get(projectId) === entry) entries.delete(projectId);
    });
    entries.delete(projectId);
    entries.set(projectId, entry);
    while (entries.size > maxProjects) entries.delete(entries.keys().next().value!);
    return entry;
  }

  /** New group types appear with captured events, not flag events: polled, never awaited. */
  function refreshMapping(projectId: number, entry: Entry): void {
    if (entry.mappingRefresh) return;
    entry.mappingAt = now();
    entry.mappingRefresh = (async () => {
      const current = await entry.value;
      const mapping = mappingOf(await deps.persons.groupTypes(projectId));
      if (entries.get(projectId) !== entry || sameMapping(mapping, current.groupTypeMapping))
        return;
      entry.value = Promise.resolve({
        ...current,
        groupTypeMapping: mapping,
        version: versionOf(current.rows, mapping, current.cohorts, current.staticCohortIds),
      });
    })()
      .catch(() => undefined)
      .finally(() => {
        entry.mappingRefresh = undefined;
      });
  }

  async function onFlagEvent(
    type: string,
    projectId: number | undefined,
    position: bigint,
  ): Promise<void> {
    await deps.awaitEvent(type, position);
    if (projectId === undefined) {
      entries.clear();
      return;
    }
    if (entries.has(projectId)) put(projectId);
  }

  return {
    async forProject(projectId) {
      let entry = entries.get(projectId);
      if (!entry || (!live && now() - entry.loadedAt > fallbackTtl)) entry = put(projectId);
      else {
        entries.delete(projectId);
        entries.set(projectId, entry);
        if (now() - entry.mappingAt > mappingTtl) refreshMapping(projectId, entry);
      }
      return entry.value;
    },

    async start() {
      if (subscription) return;
      const head = await deps.store.headPosition();
      subscription = deps.store.subscribeToAll(
        (event) => onFlagEvent(event.type, event.metadata.projectId, event.position),
        {
          after: head < 0n ? 'start' : head,
          // A cohort's definition is part of the flags that target it.
          filter: { eventTypes: [...featureFlagEventTypes, ...cohortDefinitionEventTypes] },
          onCaughtUp: () => {
            live = true;
          },
          onError: () => {
            live = false;
          },
        },
      );
    },

    async stop() {
      const s = subscription;
      subscription = undefined;
      live = false;
      await s?.stop();
      entries.clear();
    },
  };
}
