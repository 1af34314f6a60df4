/**
 * The state of one `evaluateFlags` call: the context, the clock (read at most once), the results
 * so far (a dependency is evaluated once) and the flags being evaluated (to catch a cycle the
 * definitions check missed). What depends only on the definitions — flags by key and id, the
 * cycle check — is a `Catalog`, kept per flags array: callers pass the same array for as long as
 * the definitions do not change (a new array gets a new catalog). The evaluation of a flag is
 * passed in (`evaluate`), so conditions can evaluate a dependency without an import cycle.
 */
import type { FlagFilters } from '../../../commands/featureFlags/model/flagFilters.ts';
import { failure, missingHashKeyOverrides, type Outcome, type Unresolved } from './outcome.ts';
import type { EvaluableFlag, EvaluationContext, FlagEvaluation } from './types.ts';

export type Catalog = {
  readonly byKey: ReadonlyMap<string, EvaluableFlag>;
  readonly byId: ReadonlyMap<string, EvaluableFlag>;
  /** flag key → on or behind a cycle of dependencies; filled as flags are checked */
  readonly cycles: Map<string, 'visiting' | 'cycle' | 'ok'>;
  /** some condition names another flag (else no flag needs another's memoised result) */
  readonly hasDependencies: boolean;
};

const catalogs = new WeakMap<readonly EvaluableFlag[], Catalog>();

function catalogOf(flags: readonly EvaluableFlag[]): Catalog {
  let catalog = catalogs.get(flags);
  if (!catalog) {
    catalog = {
      byKey: new Map(flags.map((f) => [f.key, f])),
      byId: new Map(flags.map((f) => [String(f.id), f])),
      cycles: new Map(),
      hasDependencies: flags.some((f) =>
        (f.filters?.groups ?? []).some((g) => (g.properties ?? []).some((p) => p.type === 'flag')),
      ),
    };
    catalogs.set(flags, catalog);
  }
  return catalog;
}

export type Session = {
  readonly context: EvaluationContext;
  readonly now: () => Date;
  readonly catalog: Catalog;
  readonly results: Map<string, FlagEvaluation>;
  readonly inProgress: Set<string>;
  readonly evaluate: (flag: EvaluableFlag) => FlagEvaluation;
  /** true once the request's deadline has passed (never without one) */
  readonly pastDeadline: () => boolean;
};

export function createSession(
  flags: readonly EvaluableFlag[],
  context: EvaluationContext,
  now: () => Date,
  evaluate: (session: Session, flag: EvaluableFlag) => FlagEvaluation,
  deadlineMs?: number,
): Session {
  let instant: Date | undefined;
  const session: Session = {
    context,
    now: () => {
      instant ??= now();
      return instant;
    },
    catalog: catalogOf(flags),
    results: new Map(),
    inProgress: new Set(),
    evaluate: (flag) => evaluate(session, flag),
    pastDeadline: deadlineMs === undefined ? () => false : () => Date.now() > deadlineMs,
  };
  return session;
}

export const filtersOf = (flag: EvaluableFlag): FlagFilters => flag.filters ?? { groups: [] };

/** A dependency names its flag by key (local evaluation) or by id (PostHog's stored filters). */
export const resolveFlag = (session: Session, ref: string): EvaluableFlag | undefined =>
  session.catalog.byKey.get(ref) ?? session.catalog.byId.get(ref);

/** The group type name of an index, when the project maps it and the request passed that group. */
export function groupName(session: Session, index: number): string | undefined {
  const name = session.context.groupTypeMapping?.[String(index)];
  return name !== undefined && session.context.groups?.[name] !== undefined ? name : undefined;
}

/**
 * The person bucketing identifier of a flag: the device id for `bucketing_identifier:
 * "device_id"` (null when the request has none: such conditions are skipped, as the flags service
 * does), else the stored hash key for experience continuity, else the distinct id.
 */
export function personIdentifier(
  session: Session,
  flag: EvaluableFlag,
  forHoldout = false,
): string | null | Unresolved {
  const { context } = session;
  if (flag.bucketing_identifier === 'device_id') {
    if (context.deviceId) return context.deviceId;
    if (!forHoldout) return null;
  }
  if (flag.ensure_experience_continuity) {
    if (context.hashKeyOverrides === undefined) return missingHashKeyOverrides();
    return context.hashKeyOverrides[flag.key] ?? context.distinctId;
  }
  return context.distinctId;
}

/** What a dependency's result means inside a condition of the flag that depends on it. */
export function asDependencyValue(
  evaluation: FlagEvaluation,
): { value: string | boolean } | Unresolved {
  if (evaluation.outcome === 'evaluated')
    return { value: evaluation.variant ?? evaluation.enabled };
  if (evaluation.outcome === 'inconclusive')
    return { unresolved: 'missing', needs: evaluation.needs };
  return failure(evaluation.error, `dependency "${evaluation.key}": ${evaluation.description}`);
}

export type { Outcome };
