import type { FlagPersons } from '../persons/flagPersonsLoader.ts';
import type { PersonsReader } from '../persons/personsReader.ts';
import { evaluateFlags } from './evaluation/evaluateFlags.ts';
import type { EvaluationContext, FlagEvaluation, GroupContext, Needs } from './evaluation/types.ts';
import type { FlagDefinitions, ProjectFlags } from './flagDefinitions.ts';

export type FlagEvaluationRequest = {
  projectId: number;
  distinctId: string;
  groups?: Record<string, string>;
  personProperties?: Record<string, unknown>;
  groupProperties?: Record<string, Record<string, unknown>>;
  keys?: readonly string[];
  deviceId?: string | null;
  /** epoch ms after which undecided flags are left out (`errorsWhileComputingFlags`) */
  deadlineMs?: number;
};

export type FlagEvaluationResult = {
  project: ProjectFlags;
  /** evaluated or not_evaluable, in the project's flag order (never inconclusive) */
  evaluations: FlagEvaluation[];
  /** some flag could not be decided (left out of answers: errorsWhileComputingFlags) */
  errors: boolean;
};

export type FlagEvaluationService = {
  evaluate(req: FlagEvaluationRequest): Promise<FlagEvaluationResult>;
  /** the stored data a first pass found it needs (an evaluation thread's, for its second pass) */
  loadStored(
    req: FlagEvaluationRequest,
    project: Pick<ProjectFlags, 'groupTypeMapping' | 'staticCohortIds'>,
    needs: Needs,
  ): Promise<StoredContext>;
};

export type FlagEvaluationDeps = {
  definitions: Pick<FlagDefinitions, 'forProject'>;
  persons: FlagPersons & Pick<PersonsReader, 'groupsForFlags'>;
  /**
   * Experience continuity: flag key → hash key stored for any of these distinct ids (the first
   * write wins). Absent: no overrides are stored anywhere (the distinct id is used).
   */
  hashKeyOverrides?: (
    projectId: number,
    distinctIds: readonly string[],
  ) => Promise<Record<string, string>>;
  now: () => Date;
  /** the static cohorts (of `cohortIds`) that hold the person; absent: none are loaded */
  staticCohorts?: (personUuid: string, cohortIds: readonly number[]) => Promise<number[]>;
};

/** What the inconclusive evaluations of a first pass need loaded, together; none: undefined. */
export function mergeNeeds(evaluations: readonly FlagEvaluation[]): Needs | undefined {
  let needs: Needs | undefined;
  for (const e of evaluations) {
    if (e.outcome !== 'inconclusive') continue;
    needs ??= { person: false, groups: [], hashKeyOverrides: false };
    needs.person ||= e.needs.person;
    needs.hashKeyOverrides ||= e.needs.hashKeyOverrides;
    for (const g of e.needs.groups) if (!needs.groups.includes(g)) needs.groups.push(g);
  }
  return needs;
}

function groupsOf(
  req: FlagEvaluationRequest,
  complete: boolean,
  stored?: (name: string) => Record<string, unknown> | undefined,
): Record<string, GroupContext> {
  const out: Record<string, GroupContext> = {};
  for (const [name, key] of Object.entries(req.groups ?? {})) {
    const supplied = req.groupProperties?.[name] ?? {};
    const base = stored?.(name);
    out[name] = { key, properties: base ? { ...base, ...supplied } : supplied, complete };
  }
  return out;
}

/**
 * What a complete pass takes from storage, as plain data: it crosses to an evaluation thread,
 * which builds the complete context from it (`completedContext`) as the main thread would.
 */
export type StoredContext = {
  /** the person's stored properties; absent when no person has the distinct id */
  person?: Record<string, unknown>;
  /** group type name → the stored properties of the request's group of that type */
  groups: [string, Record<string, unknown>][];
  hashKeyOverrides: Record<string, string>;
  /** the project's static cohorts that hold the person (only when the project has any) */
  staticCohortMemberships?: string[];
};

/**
 * The stored data the inconclusive flags need: the person and groups in parallel; hash key
 * overrides (continuity flags only) after the person, for all its ids.
 */
async function loadStored(
  deps: FlagEvaluationDeps,
  req: FlagEvaluationRequest,
  project: Pick<ProjectFlags, 'groupTypeMapping' | 'staticCohortIds'>,
  needs: Needs,
): Promise<StoredContext> {
  const indexOf = new Map(
    Object.entries(project.groupTypeMapping).map(([i, name]) => [name, Number(i)]),
  );
  const wantedGroups = needs.groups.flatMap((name) => {
    const key = req.groups?.[name];
    const index = indexOf.get(name);
    return key === undefined || index === undefined ? [] : [{ name, index, key }];
  });
  const [person, groups] = await Promise.all([
    needs.person || needs.hashKeyOverrides
      ? deps.persons.personForFlags(req.projectId, req.distinctId)
      : null,
    deps.persons.groupsForFlags(req.projectId, wantedGroups),
  ]);
  const [hashKeyOverrides, memberships] = await Promise.all([
    needs.hashKeyOverrides && deps.hashKeyOverrides
      ? deps.hashKeyOverrides(req.projectId, person?.distinctIds ?? [req.distinctId])
      : {},
    project.staticCohortIds.size > 0 && person && deps.staticCohorts
      ? deps.staticCohorts(person.uuid, [...project.staticCohortIds].map(Number))
      : [],
  ]);
  return {
    ...(person ? { person: person.properties } : {}),
    groups: wantedGroups.flatMap(({ name, index, key }) => {
      const properties = groups.get(`${index}:${key}`);
      return properties ? [[name, properties] as [string, Record<string, unknown>]] : [];
    }),
    hashKeyOverrides,
    ...(project.staticCohortIds.size > 0
      ? { staticCohortMemberships: memberships.map(String) }
      : {}),
  };
}

/**
 * The complete context: the first pass's with the stored data under the request's properties
 * (request values replace stored keys). Pure, so an evaluation thread builds the same.
 */
export function completedContext(
  base: EvaluationContext,
  req: FlagEvaluationRequest,
  stored: StoredContext,
): EvaluationContext {
  const groups = new Map(stored.groups);
  return {
    ...base,
    ...(stored.staticCohortMemberships
      ? { staticCohortMemberships: new Set(stored.staticCohortMemberships) }
      : {}),
    person: { properties: { ...stored.person, ...req.personProperties }, complete: true },
    groups: groupsOf(req, true, (name) => groups.get(name)),
    hashKeyOverrides: stored.hashKeyOverrides,
  };
}

/**
 * The context of the first pass: the request's properties only (incomplete, so a flag that needs
 * a stored property is inconclusive, not false). Pure, so an evaluation thread builds the same.
 */
export function requestContext(
  req: FlagEvaluationRequest,
  project: Pick<ProjectFlags, 'groupTypeMapping' | 'cohorts' | 'staticCohortIds'>,
  withOverridesStore: boolean,
): EvaluationContext {
  return {
    ...(project.staticCohortIds.size > 0 ? { staticCohortIds: project.staticCohortIds } : {}),
    distinctId: req.distinctId,
    deviceId: req.deviceId ?? null,
    person: { properties: req.personProperties ?? {}, complete: false },
    groups: groupsOf(req, false),
    groupTypeMapping: project.groupTypeMapping,
    cohorts: project.cohorts,
    // Without a store of overrides there is nothing to load: the distinct id is the hash key.
    ...(withOverridesStore ? {} : { hashKeyOverrides: {} }),
  };
}

/** The answerable evaluations: anything not decided is an error (left out, errors: true). */
export function settle(evaluations: readonly FlagEvaluation[]): {
  evaluations: FlagEvaluation[];
  errors: boolean;
} {
  let errors = false;
  const settled = evaluations.map((e): FlagEvaluation => {
    if (e.outcome === 'evaluated') return e;
    errors = true;
    // Complete data leaves nothing inconclusive; should it happen, it is an error, not false.
    return e.outcome === 'not_evaluable'
      ? e
      : {
          outcome: 'not_evaluable',
          key: e.key,
          error: 'invalid_filter',
          description: e.description,
        };
  });
  return { evaluations: settled, errors };
}

/**
 * Server-side flag evaluation (/decide, /flags, the flag actions): the pure evaluator on the
 * request's properties first; only when a flag is inconclusive, one batched load of what it
 * needs (stored person and group properties, hash key overrides) and a second, complete pass.
 * Request properties replace stored keys (api-spec rule 1).
 */
export function flagEvaluationService(deps: FlagEvaluationDeps): FlagEvaluationService {
  return {
    async evaluate(req) {
      const project = await deps.definitions.forProject(req.projectId);
      const base = requestContext(req, project, deps.hashKeyOverrides !== undefined);
      const options = {
        now: deps.now,
        ...(req.keys ? { keys: req.keys } : {}),
        ...(req.deadlineMs !== undefined ? { deadlineMs: req.deadlineMs } : {}),
      };
      let evaluations = evaluateFlags(project.flags, base, options);
      const needs = mergeNeeds(evaluations);
      if (needs) {
        // A failed load leaves the undecided flags out (errors: true) rather than failing the
        // request: the flags the request's properties decided still answer.
        const stored = await loadStored(deps, req, project, needs).catch(() => null);
        if (stored)
          evaluations = evaluateFlags(project.flags, completedContext(base, req, stored), options);
      }
      return { project, ...settle(evaluations) };
    },
    loadStored: (req, project, needs) => loadStored(deps, req, project, needs),
  };
}
