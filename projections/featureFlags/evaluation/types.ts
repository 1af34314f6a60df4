/**
 * What the flag evaluator takes and returns. Pure data: the caller (the /decide query side, local
 * evaluation, the flag action endpoints) builds the context from the request and the read models.
 */
import type { FlagFilters } from '../../../commands/featureFlags/model/flagFilters.ts';

/** A flag as the evaluator needs it: a flag row of the read model, or a local-evaluation entry. */
export type EvaluableFlag = {
  id: number;
  key: string;
  active: boolean;
  /** a deleted flag evaluates like an inactive one; callers normally leave deleted flags out */
  deleted?: boolean;
  ensure_experience_continuity?: boolean | null;
  /** newer PostHog: "device_id" buckets person conditions by `context.deviceId` */
  bucketing_identifier?: string | null;
  /** stored filters (normalizeFlagFilters); absent means no conditions */
  filters?: FlagFilters | null;
};

export type Properties = Readonly<Record<string, unknown>>;

/**
 * Properties known for one subject. `complete: false` means "what the request supplied": a key
 * missing from it may exist in storage, so a filter on it is inconclusive and the caller should
 * fetch the stored properties (request values replace stored ones) and evaluate again with
 * `complete: true`. With `complete: true` a missing key simply has no value (flags.md decision 2).
 */
export type PropertySource = { properties: Properties; complete: boolean };

export type GroupContext = PropertySource & { key: string };

export type EvaluationContext = {
  distinctId: string;
  /** `$device_id`, for flags with `bucketing_identifier: "device_id"` */
  deviceId?: string | null;
  person: PropertySource;
  /** by group type name (`groups` of the request), with that group's properties */
  groups?: Readonly<Record<string, GroupContext>>;
  /** group type index (as a string) → group type name, for the project */
  groupTypeMapping?: Readonly<Record<string, string>>;
  /**
   * Experience continuity: flag key → stored hash key (the person's first anonymous id). Absent
   * (undefined) means "not loaded": a continuity flag is then inconclusive with
   * `needs.hashKeyOverrides`. Present but without the flag's key: the distinct id is used.
   */
  hashKeyOverrides?: Readonly<Record<string, string>>;
  /**
   * Cohort definitions by id (local-evaluation `cohorts` shape). A cohort that is not here
   * (static cohorts, or no cohort support yet) makes a condition that needs it not evaluable.
   */
  cohorts?: Readonly<Record<string, CohortPropertyGroup>>;
  /** the project's static cohorts (ids): a fixed person set each, no definition */
  staticCohortIds?: ReadonlySet<string>;
  /**
   * The static cohorts the person is in. Absent means "not loaded": a condition on a static
   * cohort is then inconclusive (`needs.person`), decided once the person's are loaded.
   */
  staticCohortMemberships?: ReadonlySet<string>;
};

export type CohortPropertyGroup = {
  type?: string;
  values?: ReadonlyArray<CohortPropertyGroup | Readonly<Record<string, unknown>>>;
};

export type EvaluationOptions = {
  /** the injected clock, read (once per call) only when a relative date filter needs it */
  now: () => Date;
  /** evaluate only these keys (`flag_keys_to_evaluate`); their dependencies are still resolved */
  keys?: readonly string[];
  /**
   * The request's deadline (epoch ms, `Date.now()`'s clock): the flags not decided by then are
   * not evaluable (`deadline_exceeded`), so one request's properties cannot hold a thread.
   */
  deadlineMs?: number;
};

/** PostHog's `reason.code` values (Rust flags service), plus `flag_disabled` for inactive flags. */
export type ReasonCode =
  | 'condition_match'
  | 'no_condition_match'
  | 'out_of_rollout_bound'
  | 'no_group_type'
  | 'super_condition_value'
  | 'holdout_condition_value'
  | 'flag_disabled';

export type EvaluationReason = {
  code: ReasonCode;
  condition_index: number | null;
  description: string;
};

/** What the caller must load before the flag can be decided. */
export type Needs = {
  person: boolean;
  /** group type names whose stored properties are needed */
  groups: string[];
  hashKeyOverrides: boolean;
};

export type NotEvaluableCode =
  /** a cohort filter whose definition is not in `context.cohorts` */
  | 'cohort_unavailable'
  /** the flag is on, or depends on, a cycle of flag dependencies */
  | 'dependency_cycle'
  /** a flag dependency names no flag of the project */
  | 'missing_dependency'
  /** an operator the evaluator does not know */
  | 'invalid_filter'
  /** a regex construct the engine does not handle (look-around, back-references, …) */
  | 'unsupported_regex'
  /** the request's evaluation deadline passed before the flag was decided */
  | 'deadline_exceeded';

export type FlagEvaluation =
  | {
      outcome: 'evaluated';
      key: string;
      enabled: boolean;
      /** the variant key, or null for a boolean result */
      variant: string | null;
      reason: EvaluationReason;
      /** the stored payload (JSON text) of the value the flag took, or null */
      payload: string | null;
    }
  | {
      /** the answer depends on data the context did not hold: load `needs`, evaluate again */
      outcome: 'inconclusive';
      key: string;
      needs: Needs;
      description: string;
    }
  | {
      /** cannot be decided with what this server has: report `errorsWhileComputingFlags` */
      outcome: 'not_evaluable';
      key: string;
      error: NotEvaluableCode;
      description: string;
    };

/** The value SDKs see: the variant, true, or false. */
export function flagValue(e: FlagEvaluation): string | boolean | undefined {
  if (e.outcome !== 'evaluated') return undefined;
  return e.variant ?? e.enabled;
}
