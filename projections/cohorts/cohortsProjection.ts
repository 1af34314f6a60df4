import { match } from 'ts-pattern';
import { type CohortEvent, cohortEventTypes } from '../../commands/cohorts/model/cohort.ts';
import { pgProjection } from '../../src/processing/projection.ts';

/** The cohorts read model: one row per cohort with its current definition. */
export const cohortsProjection = pgProjection<CohortEvent>({
  name: 'cohorts',
  version: 2,
  tables: ['cohorts', 'cohort_people'],
  filter: { eventTypes: cohortEventTypes },
  schema: `
    CREATE TABLE IF NOT EXISTS cohorts (
      id integer PRIMARY KEY,
      project_id integer NOT NULL,
      name text NOT NULL,
      description text NOT NULL,
      filters jsonb NOT NULL,
      deleted boolean NOT NULL,
      created_at timestamptz NOT NULL,
      created_by_user_id integer,
      version integer NOT NULL,
      is_static boolean NOT NULL DEFAULT false,
      -- dynamic cohorts' membership (process cohortCalculation)
      is_calculating boolean NOT NULL DEFAULT false,
      last_calculation timestamptz,
      errors_calculating integer NOT NULL DEFAULT 0
    );
    CREATE INDEX IF NOT EXISTS cohorts_project ON cohorts (project_id, created_at DESC, id DESC);
    -- The persons of static cohorts, and of dynamic ones as last calculated.
    CREATE TABLE IF NOT EXISTS cohort_people (
      cohort_id integer NOT NULL,
      person_uuid uuid NOT NULL,
      PRIMARY KEY (cohort_id, person_uuid)
    );
  `,
  async handle(events, tx) {
    for (const event of events) {
      await match(event as CohortEvent)
        .with({ type: 'CohortCreated' }, (e) =>
          tx.query(
            `INSERT INTO cohorts (id, project_id, name, description, filters, deleted, created_at, created_by_user_id, version, is_static)
             VALUES ($1, $2, $3, $4, $5, false, $6, $7, 1, $8) ON CONFLICT (id) DO NOTHING`,
            [
              e.data.cohortId,
              e.data.projectId,
              e.data.fields.name,
              e.data.fields.description,
              JSON.stringify(e.data.fields.filters),
              e.data.createdAt,
              e.data.createdByUserId,
              e.data.isStatic === true,
            ],
          ),
        )
        .with({ type: 'CohortUpdated' }, (e) =>
          tx.query(
            `UPDATE cohorts SET name = COALESCE($2, name), description = COALESCE($3, description),
                    filters = COALESCE($4::jsonb, filters), version = version + 1 WHERE id = $1`,
            [
              e.data.cohortId,
              e.data.changes.name ?? null,
              e.data.changes.description ?? null,
              e.data.changes.filters === undefined ? null : JSON.stringify(e.data.changes.filters),
            ],
          ),
        )
        .with({ type: 'CohortSoftDeleted' }, (e) =>
          tx.query('UPDATE cohorts SET deleted = true, version = version + 1 WHERE id = $1', [
            e.data.cohortId,
          ]),
        )
        .with({ type: 'CohortPersonsAdded' }, (e) =>
          tx.query(
            `INSERT INTO cohort_people (cohort_id, person_uuid)
             SELECT $1, u FROM unnest($2::uuid[]) AS u ON CONFLICT DO NOTHING`,
            [e.data.cohortId, e.data.personUuids],
          ),
        )
        .with({ type: 'CohortCalculationStarted' }, (e) =>
          tx.query('UPDATE cohorts SET is_calculating = true WHERE id = $1', [e.data.cohortId]),
        )
        .with({ type: 'CohortMembersChanged' }, async (e) => {
          await tx.query(
            'DELETE FROM cohort_people WHERE cohort_id = $1 AND person_uuid = ANY($2::uuid[])',
            [e.data.cohortId, e.data.removed],
          );
          await tx.query(
            `INSERT INTO cohort_people (cohort_id, person_uuid)
             SELECT $1, u FROM unnest($2::uuid[]) AS u ON CONFLICT DO NOTHING`,
            [e.data.cohortId, e.data.added],
          );
        })
        .with({ type: 'CohortCalculated' }, (e) =>
          tx.query(
            `UPDATE cohorts SET is_calculating = false, last_calculation = $2,
                    errors_calculating = errors_calculating + $3 WHERE id = $1`,
            [e.data.cohortId, e.data.at, e.data.error === undefined ? 0 : 1],
          ),
        )
        .exhaustive();
    }
  },
});
