import { match } from 'ts-pattern';
import {
  type FeatureFlagEvent,
  type FlagField,
  featureFlagEventTypes,
  flagFieldNames,
} from '../../commands/featureFlags/model/featureFlag.ts';
import { pgProjection } from '../../src/processing/projection.ts';

const jsonColumns = new Set<FlagField>([
  'filters',
  'rollback_conditions',
  'tags',
  'analytics_dashboards',
]);
const toColumn = (field: FlagField, value: unknown) =>
  jsonColumns.has(field) ? JSON.stringify(value ?? null) : value;

/** The flags read model: one row per flag with its current fields, plus its role access entries. */
export const featureFlagsProjection = pgProjection<FeatureFlagEvent>({
  name: 'feature_flags',
  version: 1,
  tables: ['feature_flags', 'feature_flag_role_access'],
  filter: { eventTypes: featureFlagEventTypes },
  schema: `
    CREATE TABLE IF NOT EXISTS feature_flags (
      id integer PRIMARY KEY,
      project_id integer NOT NULL,
      key text NOT NULL,
      name text NOT NULL,
      filters jsonb NOT NULL,
      active boolean NOT NULL,
      deleted boolean NOT NULL,
      ensure_experience_continuity boolean NOT NULL,
      rollback_conditions jsonb,
      performed_rollback boolean NOT NULL,
      tags jsonb NOT NULL,
      analytics_dashboards jsonb NOT NULL,
      has_enriched_analytics boolean NOT NULL,
      created_by_user_id integer,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      revision bigint NOT NULL
    );
    CREATE INDEX IF NOT EXISTS feature_flags_project_key ON feature_flags (project_id, key) WHERE NOT deleted;
    CREATE TABLE IF NOT EXISTS feature_flag_role_access (
      id integer PRIMARY KEY,
      flag_id integer NOT NULL,
      role_id uuid NOT NULL,
      added_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE INDEX IF NOT EXISTS feature_flag_role_access_flag ON feature_flag_role_access (flag_id);
  `,
  async handle(events, tx) {
    for (const event of events) {
      const revision = event.revision.toString();
      const at = event.metadata.occurredAt;
      const touch = (flagId: number, set: string, params: unknown[]) =>
        tx.query(
          `UPDATE feature_flags SET ${set}, updated_at = $2, revision = $3 WHERE id = $1 AND revision < $3`,
          [flagId, at, revision, ...params],
        );
      await match(event)
        .with({ type: 'FeatureFlagCreated' }, ({ data: d }) => {
          const f = d.fields;
          return tx.query(
            `INSERT INTO feature_flags VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17)
             ON CONFLICT (id) DO NOTHING`,
            [
              d.flagId,
              d.projectId,
              f.key,
              f.name,
              JSON.stringify(f.filters),
              f.active,
              d.deleted,
              f.ensure_experience_continuity,
              JSON.stringify(f.rollback_conditions ?? null),
              f.performed_rollback,
              JSON.stringify(f.tags),
              JSON.stringify(f.analytics_dashboards),
              f.has_enriched_analytics,
              d.createdByUserId,
              d.createdAt,
              at,
              revision,
            ],
          );
        })
        .with({ type: 'FeatureFlagPatched' }, ({ data: d }) => {
          const fields = flagFieldNames.filter((f) => f in d.changes);
          if (fields.length === 0) return touch(d.flagId, 'id = id', []);
          // Column names come from the fixed field list above, never from input.
          const set = fields.map((f, i) => `${f} = $${i + 4}`).join(', ');
          return touch(
            d.flagId,
            set,
            fields.map((f) => toColumn(f, d.changes[f])),
          );
        })
        .with({ type: 'FeatureFlagSoftDeleted' }, ({ data: d }) =>
          touch(d.flagId, 'deleted = true', []),
        )
        .with({ type: 'FeatureFlagRestored' }, ({ data: d }) =>
          touch(d.flagId, 'deleted = false', []),
        )
        .with({ type: 'RoleAccessGranted' }, async ({ data: d }) => {
          await tx.query(
            `INSERT INTO feature_flag_role_access VALUES ($1,$2,$3,$4,$4) ON CONFLICT (id) DO NOTHING`,
            [d.roleAccessId, d.flagId, d.roleId, d.addedAt],
          );
          return touch(d.flagId, 'id = id', []);
        })
        .with({ type: 'RoleAccessRevoked' }, async ({ data: d }) => {
          await tx.query('DELETE FROM feature_flag_role_access WHERE id = $1', [d.roleAccessId]);
          return touch(d.flagId, 'id = id', []);
        })
        .exhaustive();
    }
  },
});
