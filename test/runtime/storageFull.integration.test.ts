import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/testService.ts';

/**
 * Issue #26: with the disk full, capture answered 500. Storage failures on the acknowledgement
 * path (disk full, out of memory, an I/O error) are outages like the others: 503 with Retry-After,
 * so clients keep the events and retry. Simulated without filling a disk: a trigger on the log
 * raises the SQLSTATE Postgres raises when it cannot extend a file.
 */
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
}, 120_000);
afterAll(async () => {
  await t?.close();
});

const event = (uuid: string) => ({
  event: 'stored',
  distinct_id: 'disk-full',
  uuid,
  properties: {},
});
const batch = async (uuids: string[]) => {
  const res = await fetch(`${t.url}/batch/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: t.projectApiKey, batch: uuids.map(event) }),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() };
};

async function failAppendsWith(sqlState: string | null): Promise<void> {
  const pool = t.service.stores.pool;
  await pool.query('DROP TRIGGER IF EXISTS storage_failure ON event_log');
  if (sqlState === null) return;
  await pool.query(`CREATE OR REPLACE FUNCTION storage_failure() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'simulated storage failure' USING ERRCODE = '${sqlState}'; END $$`);
  await pool.query(
    'CREATE TRIGGER storage_failure BEFORE INSERT ON event_log FOR EACH STATEMENT EXECUTE FUNCTION storage_failure()',
  );
}

async function loggedUuids(): Promise<string[]> {
  const events = await t.service.stores.store.readAll({
    filter: { eventTypes: ['EventCaptured'] },
    maxCount: 10_000,
  });
  return events.map((e) => (e.data as { uuid: string }).uuid);
}

describe('storage failures on the acknowledgement path', () => {
  it('answers 503 with Retry-After while the disk is full, and loses nothing acknowledged', async () => {
    const before = [randomUUID(), randomUUID()];
    expect((await batch(before)).status).toBe(200);

    const refused = [randomUUID(), randomUUID(), randomUUID()];
    try {
      await failAppendsWith('53100'); // disk_full
      const full = await batch(refused);
      expect(full.status).toBe(503);
      expect(full.retryAfter).toMatch(/^\d+$/);
      expect(JSON.parse(full.body)).toMatchObject({
        type: 'server_error',
        code: 'service_unavailable',
        attr: null,
      });
      // A REST write appends to the same log: the same answer.
      await failAppendsWith('58030'); // io_error
      const flag = await t.api('POST', `/api/projects/${t.projectId}/feature_flags/`, {
        key: 'written-while-full',
        filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
      });
      expect(flag.status).toBe(503);
      await failAppendsWith('53200'); // out_of_memory
      expect((await batch(refused)).status).toBe(503);
    } finally {
      await failAppendsWith(null);
    }

    // Space again: the client's retry of the same batch is acknowledged, and the log holds every
    // acknowledged event exactly once.
    expect((await batch(refused)).status).toBe(200);
    const logged = await loggedUuids();
    for (const uuid of [...before, ...refused])
      expect(logged.filter((u) => u === uuid)).toHaveLength(1);
  });
});
