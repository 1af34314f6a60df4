import type { z } from 'zod';
import {
  evolveFlag,
  FEATURE_FLAG_CATEGORY,
  type FeatureFlagEvent,
  featureFlagEventTypes,
  featureFlagStream,
  flagFieldNames,
  initialFlagState,
} from '../../commands/featureFlags/model/featureFlag.ts';
import type { RecordedEvent } from '../../src/core/event.ts';
import {
  activityChangeSchema,
  activityEntrySchema,
  activityReaders,
  changeMaker,
  entryBase,
  foldActivity,
  type RawActivityEntry,
} from '../shared/resourceActivity.ts';

export const ActivityChange = activityChangeSchema('FeatureFlag');

export const ActivityEntry = activityEntrySchema({
  id: 'ActivityLogEntry',
  scope: 'FeatureFlag',
  activities: [
    'created',
    'updated',
    'deleted',
    'restored',
    'role_access_added',
    'role_access_removed',
  ],
  change: ActivityChange,
});
export type ActivityEntry = z.infer<typeof ActivityEntry>;
type Change = z.infer<typeof ActivityChange>;
type RawEntry = RawActivityEntry<typeof ActivityEntry>;

const change = changeMaker('FeatureFlag');

/** One entry per event of a flag stream, with field-level before/after folded from the stream itself. */
export function activityOf(events: readonly RecordedEvent<FeatureFlagEvent>[]): RawEntry[] {
  return foldActivity(
    events,
    initialFlagState(),
    evolveFlag,
    (entries: RawEntry[], event, now, prev) => {
      const base = entryBase(event, 'FeatureFlag', String(now.flagId));
      const detail = (changes: Change[]) => ({
        id: String(now.flagId),
        name: now.fields.key,
        changes,
      });
      const entry = ((): RawEntry | undefined => {
        switch (event.type) {
          case 'FeatureFlagCreated':
            return {
              ...base,
              activity: 'created',
              detail: detail(
                flagFieldNames.map((f) => change('created', f, null, event.data.fields[f])),
              ),
            };
          case 'FeatureFlagPatched':
            return {
              ...base,
              activity: 'updated',
              detail: detail(
                flagFieldNames
                  .filter((f) => f in event.data.changes)
                  .map((f) => change('changed', f, prev?.fields[f] ?? null, event.data.changes[f])),
              ),
            };
          case 'FeatureFlagSoftDeleted':
            return {
              ...base,
              activity: 'deleted',
              detail: detail([change('deleted', 'deleted', false, true)]),
            };
          case 'FeatureFlagRestored':
            return {
              ...base,
              activity: 'restored',
              detail: detail([change('changed', 'deleted', true, false)]),
            };
          case 'RoleAccessGranted':
            return {
              ...base,
              activity: 'role_access_added',
              detail: detail([
                change('changed', 'role_access', null, {
                  id: event.data.roleAccessId,
                  role_id: event.data.roleId,
                }),
              ]),
            };
          case 'RoleAccessRevoked':
            return {
              ...base,
              activity: 'role_access_removed',
              detail: detail([
                change(
                  'changed',
                  'role_access',
                  { id: event.data.roleAccessId, role_id: event.data.roleId },
                  null,
                ),
              ]),
            };
        }
      })();
      if (entry) entries.push(entry);
    },
  );
}

/** Flag activity: of one flag (undefined when not in this project), of a project's flags. */
export const { one: flagActivity, all: allFlagsActivity } = activityReaders({
  stream: featureFlagStream,
  streamPrefix: `${FEATURE_FLAG_CATEGORY}-`,
  eventTypes: featureFlagEventTypes,
  createdType: 'FeatureFlagCreated',
  fold: activityOf,
});
