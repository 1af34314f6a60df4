import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import { createTestDatabase } from '../support/testDatabase.ts';
import { startTestService, type TestService } from '../support/testService.ts';

// Issue #12 (upgrade path): a read model whose projection version changed is rebuilt from the log
// into fresh tables (its new DDL and handler) and swapped in, instead of the new version replaying
// the log on top of what the old version left.
const services: TestService[] = [];
afterAll(async () => {
  for (const s of services) await s.close();
});

describe('a projection of another version on start', () => {
  it('is rebuilt blue/green: the old tables replaced, the old checkpoint gone, events once', {
    timeout: 120_000,
  }, async () => {
    const databaseUrl = await createTestDatabase();
    const first = await startTestService({}, { databaseUrl });
    services.push(first);
    // two events without a distinct id: two ingestion warnings
    await capture({ url: first.url, projectApiKey: first.projectApiKey }, [
      { event: 'a', properties: {} },
      { event: 'b', properties: {} },
    ]);
    const head = await first.service.stores.store.headPosition();
    expect(await first.service.runners.get('ingestion_warnings')!.waitFor(head, 20_000)).toBe(true);
    await first.close();
    services.pop();

    // What an older version of the projection (version 0) left: its checkpoint, a table without
    // the index version 1 creates, and a row the log does not hold.
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      await db.query(
        `UPDATE projection_checkpoints SET id = 'ingestion_warnings@0' WHERE id = 'ingestion_warnings@1'`,
      );
      await db.query('DROP INDEX ingestion_warnings_project_at');
      await db.query(
        `INSERT INTO ingestion_warnings (id, project_id, type, details, at)
         VALUES (gen_random_uuid(), 1, 'left_by_version_0', '{}', now())`,
      );

      const second = await startTestService({}, { databaseUrl });
      services.push(second);
      let ids: string[] = [];
      for (let i = 0; i < 200; i++) {
        ids = (
          await db.query<{ id: string }>(
            `SELECT id FROM projection_checkpoints WHERE id LIKE 'ingestion\\_warnings@%'`,
          )
        ).rows.map((r) => r.id);
        if (ids.includes('ingestion_warnings@1')) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(ids).toEqual(['ingestion_warnings@1']);
      const rows = await db.query<{ type: string }>(
        'SELECT type FROM ingestion_warnings ORDER BY type',
      );
      expect(rows.rows.map((r) => r.type)).toEqual([
        'skipping_event_invalid_distinct_id',
        'skipping_event_invalid_distinct_id',
      ]);
      const index = await db.query(
        `SELECT 1 FROM pg_indexes WHERE indexname = 'ingestion_warnings_project_at'`,
      );
      expect(index.rowCount).toBe(1);
      // and the runner goes on from there: a new warning is projected once
      await capture({ url: second.url, projectApiKey: second.projectApiKey }, [
        { event: 'c', properties: {} },
      ]);
      const newHead = await second.service.stores.store.headPosition();
      expect(await second.service.runners.get('ingestion_warnings')!.waitFor(newHead, 20_000)).toBe(
        true,
      );
      const after = await db.query('SELECT 1 FROM ingestion_warnings');
      expect(after.rowCount).toBe(3);
    } finally {
      await db.end();
    }
  });
});
