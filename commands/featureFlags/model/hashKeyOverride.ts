import type { Event } from '../../../src/core/event.ts';

/**
 * Experience continuity (flags.md §3.4, PostHog's `set_feature_flag_hash_key_overrides`): when a
 * client sends `$anon_distinct_id`, flags with `ensure_experience_continuity` keep hashing the
 * anonymous id for both ids, so identifying does not change the variant a visitor saw. The first
 * hash key recorded for a (distinct id, flag) stays.
 */
export type HashKeyOverride = { distinctId: string; flagKey: string };

export type FeatureFlagHashKeyOverridesSet = Event<
  'FeatureFlagHashKeyOverridesSet',
  { projectId: number; hashKey: string; overrides: HashKeyOverride[] }
>;

export const HASH_KEY_OVERRIDE_EVENT_TYPES = ['FeatureFlagHashKeyOverridesSet'] as const;

/** One stream per project: overrides are never read back from the log, only projected. */
export const hashKeyOverrideStream = (projectId: number) => `flag_hash_key_overrides-${projectId}`;

/**
 * The decider: overrides to record for `distinctIds` and the continuity flags, minus those
 * already recorded (`existing`: `${distinctId}\0${flagKey}`); null when there is nothing new, so
 * repeated /decide calls do not grow the log.
 */
export function decideHashKeyOverrides(input: {
  projectId: number;
  hashKey: string;
  distinctIds: readonly string[];
  continuityFlagKeys: readonly string[];
  existing: ReadonlySet<string>;
}): FeatureFlagHashKeyOverridesSet | null {
  const overrides: HashKeyOverride[] = [];
  for (const distinctId of new Set(input.distinctIds))
    for (const flagKey of input.continuityFlagKeys)
      if (!input.existing.has(`${distinctId}\0${flagKey}`)) overrides.push({ distinctId, flagKey });
  if (overrides.length === 0) return null;
  return {
    type: 'FeatureFlagHashKeyOverridesSet',
    data: { projectId: input.projectId, hashKey: input.hashKey, overrides },
  };
}
