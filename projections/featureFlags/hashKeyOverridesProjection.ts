import {
  type FeatureFlagHashKeyOverridesSet,
  HASH_KEY_OVERRIDE_EVENT_TYPES,
} from '../../commands/featureFlags/model/hashKeyOverride.ts';
import { pgProjection } from '../../src/processing/projection.ts';

/** Experience continuity's hash keys by (project, distinct id, flag key); the first one wins. */
export const hashKeyOverridesProjection = pgProjection<FeatureFlagHashKeyOverridesSet>({
  name: 'feature_flag_hash_key_overrides',
  version: 1,
  tables: ['feature_flag_hash_key_overrides'],
  filter: { eventTypes: HASH_KEY_OVERRIDE_EVENT_TYPES },
  schema: `
    CREATE TABLE IF NOT EXISTS feature_flag_hash_key_overrides (
      project_id integer NOT NULL,
      distinct_id text NOT NULL,
      flag_key text NOT NULL,
      hash_key text NOT NULL,
      position bigint NOT NULL,
      PRIMARY KEY (project_id, distinct_id, flag_key)
    );
  `,
  async handle(events, tx) {
    for (const event of events) {
      const d = event.data;
      if (d.overrides.length === 0) continue;
      await tx.query(
        `INSERT INTO feature_flag_hash_key_overrides
         SELECT $1::int, o.distinct_id, o.flag_key, $2::text, $3::bigint
           FROM unnest($4::text[], $5::text[]) AS o(distinct_id, flag_key)
         ON CONFLICT DO NOTHING`,
        [
          d.projectId,
          d.hashKey,
          event.position.toString(),
          d.overrides.map((o) => o.distinctId),
          d.overrides.map((o) => o.flagKey),
        ],
      );
    }
  },
});
