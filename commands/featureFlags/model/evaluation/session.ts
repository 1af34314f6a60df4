/**
 * The state of one `evaluateFlags` call: the flags by key and id, the context, the clock (read
 * at most once), the results so far (a dependency is evaluated once), and the bucketing
 * identifiers. The evaluation of a flag by key is passed in (`evaluate`), so conditions can
 * evaluate a dependency without an import cycle.
 */
import type { FlagFilters } from '../flagFilters.ts';
import { failure, missingHashKeyOverrides, type Outcome, type Unresolved } from './outcome.ts';
import type { EvaluableFlag, EvaluationContext, FlagEvaluation, GroupContext } from './types.ts';

export type Session = {
  readonly context: EvaluationContext;
  readonly now: () => Date;
  readonly byKey: ReadonlyMap<string, EvaluableFlag>;
  readonly byId: ReadonlyMap<string, EvaluableFlag>;
  readonly results: Map<string, FlagEvaluation>;
  readonly inProgress: Set<string>;
  readonly cycles: Map<string, 'visiting' | 'cycle' | 'ok'>;
  evaluate: (flag: EvaluableFlag) => FlagEvaluation;
};

export function createSession(
  flags: readonly EvaluableFlag[],
  context: EvaluationContext,
  now: () => Date,
  evaluate: (session: Session, flag: EvaluableFlag) => FlagEvaluation,
): Session {
  let instant: Date | undefined;
  const session: Session = {
    context,
    now: () => {
      instant ??= now();
      return instant;
    },
    byKey: new Map(flags.map((f) => [f.key, f])),
    byId: new Map(flags.map((f) => [String(f.id), f])),
    results: new Map(),
    inProgress: new Set(),
    cycles: new Map(),
    evaluate: (flag) => evaluate(session, flag),
  };
  return session;
}

export const filtersOf = (flag: EvaluableFlag): FlagFilters => flag.filters ?? { groups: [] };

/** A dependency names its flag by key (local evaluation) or by id (PostHog's stored filters). */
export const resolveFlag = (session: Session, ref: string): EvaluableFlag | undefined =>
  session.byKey.get(ref) ?? session.byId.get(ref);

/** The group of a type index, when the project maps the index and the request passed the group. */
export function groupOf(
  session: Session,
  index: number,
): (GroupContext & { name: string }) | undefined {
  const name = session.context.groupTypeMapping?.[String(index)];
  const group = name === undefined ? undefined : session.context.groups?.[name];
  return group && name !== undefined ? { ...group, name } : undefined;
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
