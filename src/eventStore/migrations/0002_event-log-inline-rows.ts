// Migration 2: no pglz on the log's hot path (issue #27). Postgres compresses a row once it passes
// TOAST's threshold (≈ 2 KB), and a captured event's compact record is about that size: pglz then
// cost ≈ 10 µs of Postgres CPU a row to save a third of its bytes (bench/logRows.ts,
// docs/PERFORMANCE.md "Issue #27, sixth part"). A Postgres built with lz4 compresses the data
// column with it instead (a fraction of pglz's CPU, as small on disk). One without (the embedded
// binaries) keeps rows up to 4080 bytes inline and uncompressed — the largest row two of which
// still share an 8 KB page; longer rows are compressed as before. Only new rows are affected (no
// rewrite). Self-contained: node-pg-migrate loads it on its own.

export const up = (pgm: { sql(statement: string): void }) => {
  pgm.sql(`DO $$
BEGIN
  ALTER TABLE event_log ALTER COLUMN data SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  ALTER TABLE event_log SET (toast_tuple_target = 4080);
END $$`);
};
