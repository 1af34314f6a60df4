import type { IngestionWarningRecorded } from '../../commands/capture/model/eventCaptured.ts';
import { pgProjection } from '../../src/processing/projection.ts';

/** Why events were not ingested (or were changed on the way in), for GET ingestion_warnings/. */
export const ingestionWarningsProjection = pgProjection<IngestionWarningRecorded>({
  name: 'ingestion_warnings',
  version: 1,
  tables: ['ingestion_warnings'],
  filter: { eventTypes: ['IngestionWarningRecorded'] },
  schema: `
    CREATE TABLE IF NOT EXISTS ingestion_warnings (
      id uuid PRIMARY KEY,
      project_id integer NOT NULL,
      type text NOT NULL,
      event_uuid text,
      details jsonb NOT NULL,
      at timestamptz NOT NULL
    );
    CREATE INDEX IF NOT EXISTS ingestion_warnings_project_at ON ingestion_warnings (project_id, at DESC);
  `,
  async handle(rows, tx) {
    await tx.query(
      `INSERT INTO ingestion_warnings (id, project_id, type, event_uuid, details, at)
       SELECT * FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::jsonb[], $6::timestamptz[])
       ON CONFLICT (id) DO NOTHING`,
      [
        rows.map((e) => e.id),
        rows.map((e) => e.data.projectId),
        rows.map((e) => e.data.type),
        rows.map((e) => e.data.eventUuid),
        rows.map((e) => JSON.stringify(e.data.details)),
        rows.map((e) => e.data.at),
      ],
    );
  },
});
