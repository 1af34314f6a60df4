import type { ProjectFlags } from '../../projections/featureFlags/flagDefinitions.ts';
import { hashKeyOverridesProjection } from '../../projections/featureFlags/hashKeyOverridesProjection.ts';
import type { HashKeyOverridesReader } from '../../projections/featureFlags/hashKeyOverridesReader.ts';
import type { AppContext } from '../../src/appContext.ts';
import {
  decideHashKeyOverrides,
  type FeatureFlagHashKeyOverridesSet,
  hashKeyOverrideStream,
} from './model/hashKeyOverride.ts';

export type ContinuityDeps = Readonly<{
  store: AppContext['store'];
  awaitProjection: AppContext['awaitProjection'];
  now: () => Date;
  overrides: Pick<HashKeyOverridesReader, 'existing'>;
  definitions: { forProject(projectId: number): Promise<ProjectFlags> };
}>;

/**
 * `$anon_distinct_id` in a /decide body: record the anonymous id as the hash key of every
 * continuity flag for both ids (read first; append only what is new), then wait (bounded) for the
 * read model so the evaluation that follows sees it.
 */
export async function setHashKeyOverrides(
  deps: ContinuityDeps,
  projectId: number,
  distinctId: string,
  anonDistinctId: string,
): Promise<void> {
  const project = await deps.definitions.forProject(projectId);
  const continuityFlagKeys = project.flags
    .filter((f) => f.ensure_experience_continuity && f.active)
    .map((f) => f.key);
  if (continuityFlagKeys.length === 0) return;
  const distinctIds = [distinctId, anonDistinctId];
  const event = decideHashKeyOverrides({
    projectId,
    hashKey: anonDistinctId,
    distinctIds,
    continuityFlagKeys,
    existing: await deps.overrides.existing(projectId, distinctIds),
  });
  if (!event) return;
  const result = await deps.store.appendToStream<FeatureFlagHashKeyOverridesSet>(
    hashKeyOverrideStream(projectId),
    [{ ...event, metadata: { projectId, occurredAt: deps.now().toISOString() } }],
    { expectedRevision: 'any' },
  );
  await deps.awaitProjection(hashKeyOverridesProjection, result.position);
}
