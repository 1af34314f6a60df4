import {
  evolveFlag,
  type FeatureFlagEvent,
  featureFlagStream,
  initialFlagState,
} from '../../commands/featureFlags/model/featureFlag.ts';
import type { FlagRow } from '../../projections/featureFlags/featureFlagsReader.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';

/**
 * The flag as it was at `at`: its stream folded with the write side's `evolveFlag` up to the last
 * change made at or before it (the events' `occurredAt`, what the read model keeps as
 * `updated_at`), shaped as the read model's row, so the answer is the live GET's. Undefined when the flag did not exist yet, or
 * belongs to another project.
 */
export async function flagAsOf(
  store: EventStore,
  projectId: number,
  flagId: number,
  at: Date,
): Promise<FlagRow | undefined> {
  const events = await store.readStream<FeatureFlagEvent>(featureFlagStream(flagId));
  let state = initialFlagState();
  let updatedAt: Date | undefined;
  for (const e of events) {
    // the time of the change, as the read model keeps it (`updated_at`)
    const when = new Date(e.metadata.occurredAt);
    if (when > at) break;
    state = evolveFlag(state, e);
    updatedAt = when;
  }
  if (state.status !== 'present' || state.projectId !== projectId || !updatedAt) return undefined;
  const f = state.fields;
  return {
    id: state.flagId,
    project_id: state.projectId,
    key: f.key,
    name: f.name,
    filters: f.filters,
    active: f.active,
    deleted: state.deleted,
    ensure_experience_continuity: f.ensure_experience_continuity,
    rollback_conditions: f.rollback_conditions ?? null,
    performed_rollback: f.performed_rollback,
    tags: f.tags,
    analytics_dashboards: f.analytics_dashboards,
    has_enriched_analytics: f.has_enriched_analytics,
    created_by_user_id: state.createdByUserId,
    created_at: new Date(state.createdAt),
    updated_at: updatedAt,
    role_ids: state.roleAccess.map((r) => r.roleId),
  };
}
