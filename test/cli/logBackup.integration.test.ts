import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import { createTestDatabase } from '../support/testDatabase.ts';
import { startTestService, type TestService } from '../support/testService.ts';

// Issue #12: the log is the source of truth, so it is the backup. `log export` → a fresh database
// → `log import` → `rebuild all` gives read models equal to the original's.
const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-log-backup-'));

const cli = async (databaseUrl: string, ...args: string[]) => {
  const { stdout, stderr } = await run(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', ...args, '--json'],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        // the CLI is another process: a chDB directory of its own
        CHDB_PATH: path.join(tmp, `chdb-${Math.random().toString(36).slice(2)}`),
        LOG_LEVEL: 'warn',
      },
    },
  );
  return { json: JSON.parse(stdout.trim().split('\n').pop()!), progress: stderr };
};

async function tables(url: string) {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const q = async (sql: string) => (await db.query(sql)).rows;
    return {
      persons: await q(
        'SELECT id, uuid, properties, is_identified, created_at, version FROM persons ORDER BY id',
      ),
      distinctIds: await q(
        'SELECT distinct_id, person_id, ord FROM person_distinct_ids ORDER BY distinct_id',
      ),
      flags: await q(
        'SELECT id, key, name, filters, active, deleted, created_at, updated_at FROM feature_flags ORDER BY id',
      ),
      projects: await q('SELECT * FROM projects ORDER BY id'),
    };
  } finally {
    await db.end();
  }
}

let original: TestService;
let originalUrl: string;
beforeAll(async () => {
  originalUrl = await createTestDatabase();
  original = await startTestService({}, { databaseUrl: originalUrl });
});
afterAll(async () => {
  await original?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('log export and import', () => {
  it('restores every read model into a fresh database, and a second import adds nothing', {
    timeout: 120_000,
  }, async () => {
    const t = original;
    await capture({ url: t.url, projectApiKey: t.projectApiKey }, [
      { event: '$pageview', properties: { distinct_id: 'anon-1' } },
      {
        event: '$identify',
        properties: { distinct_id: 'user-1', $anon_distinct_id: 'anon-1', $set: { plan: 'pro' } },
      },
      { event: 'bought', properties: { distinct_id: 'user-2', $set_once: { first: 'x' } } },
    ]);
    const flag = await t.api('POST', `/api/projects/${t.projectId}/feature_flags/`, {
      key: 'backed-up',
      filters: { groups: [{ properties: [], rollout_percentage: 50 }] },
    });
    expect(flag.status, flag.text).toBe(201);
    await t.api('PATCH', `/api/projects/${t.projectId}/feature_flags/${flag.body.id}/`, {
      name: 'renamed',
    });
    const head = await t.service.stores.store.headPosition();
    let before = await tables(originalUrl);
    for (let i = 0; i < 100 && before.persons.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 100));
      before = await tables(originalUrl);
    }
    expect(before.persons.length).toBe(2);
    expect(before.flags.map((f) => f.name)).toEqual(['renamed']);

    const file = path.join(tmp, 'log.ndjson.gz');
    const exported = await cli(originalUrl, 'log', 'export', '--to', file);
    expect(exported.json).toEqual({ exported: Number(head), file });
    expect(exported.progress).toMatch(/^log: (\d+)\/\1 positions \(100 %\)/m);

    const freshUrl = await createTestDatabase();
    const imported = await cli(freshUrl, 'log', 'import', '--from', file);
    expect(imported.json).toEqual({ imported: Number(head), file });
    // `status`: the ClickHouse events table has not seen the 3 captured events yet
    const pendingModel = async (name: string) =>
      (await cli(freshUrl, 'status')).json.read_models.find(
        (m: { name: string }) => m.name === name,
      );
    expect(await pendingModel('clickhouse:events')).toMatchObject({
      position: '-1',
      pending_events: '3',
    });
    const rebuilt = await cli(freshUrl, 'rebuild', 'all');
    expect(await pendingModel('clickhouse:events')).toMatchObject({
      pending_events: '0',
      lag_seconds: 0,
    });
    expect(rebuilt.json.rebuilt.filter((r: { skipped?: string }) => r.skipped)).toEqual([]);
    const after = await tables(freshUrl);
    expect(after).toEqual(before);

    // Idempotent: the same file again appends nothing (ids already in the log).
    const again = await cli(freshUrl, 'log', 'import', '--from', file);
    expect(again.json.imported).toBe(Number(head));
    const db = new pg.Client({ connectionString: freshUrl });
    await db.connect();
    const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM event_log');
    await db.end();
    expect(Number(rows[0]!.n)).toBe(Number(head));
  });
});
