// Migration 1: the event log as it was before migrations existed. Idempotent (IF NOT EXISTS), so
// a log created by an earlier release takes it as already applied. Self-contained: node-pg-migrate
// loads migration files on their own.

export const eventLogSchema = `
CREATE TABLE IF NOT EXISTS event_log (
  position     bigserial PRIMARY KEY,
  id           uuid NOT NULL UNIQUE,
  stream_name  text NOT NULL,
  revision     bigint NOT NULL,
  type         text NOT NULL,
  -- json, not jsonb: the log is written far more than it is queried inside, and json keeps the text as sent
  data         json NOT NULL,
  metadata     json NOT NULL,
  recorded_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (stream_name, revision)
);
CREATE INDEX IF NOT EXISTS event_log_type_position ON event_log (type, position);
`;

export const up = (pgm: { sql(statement: string): void }) => {
  pgm.sql(eventLogSchema);
};
