import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { openClickHouse } from '../../../src/runtime/clickhouse.ts';
import { eventsOf, identifiedPerson, personsPath } from '../../support/personHttp.ts';
import { startTestService, type TestService } from '../../support/testService.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../../..');

let t: TestService | undefined;
afterAll(async () => {
  await t?.close();
});

/**
 * `npm run cli -- run-deletions` runs the queue on demand. Embedded chDB allows one process per
 * directory, so the server stops first (with a ClickHouse server both can run at once).
 */
describe('npm run cli -- run-deletions', () => {
  it('deletes the queued events now and reports what it did; a second run finds nothing', async () => {
    t = await startTestService();
    const { person, anon, user, device } = await identifiedPerson(t, 'cli');
    expect(await eventsOf(t, user)).toHaveLength(2); // also waits until ClickHouse has them
    expect((await t.api('DELETE', personsPath(t, `${person.id}/?delete_events=true`))).status).toBe(
      204,
    );
    expect(await eventsOf(t, user)).toHaveLength(2); // queued only
    const { config } = t;
    await t.close();
    t = undefined;

    const env = {
      ...process.env,
      DATA_DIR: config.dataDir,
      DATABASE_URL: config.databaseUrl!,
      CHDB_PATH: config.chdbPath,
      CLICKHOUSE_DATABASE: config.clickhouseDatabase,
      CLICKHOUSE_URL: '',
      EVENTSTORE_URL: '',
      LOG_LEVEL: 'warn',
    };
    const cli = async () => {
      const { stdout } = await run(
        process.execPath,
        ['--import', 'tsx', 'src/cli/main.ts', 'run-deletions', '--json'],
        { cwd: root, env },
      );
      return JSON.parse(stdout.trim().split('\n').pop()!);
    };
    expect(await cli()).toEqual({ ran: true, deleted: 1, waiting: 0 });
    expect(await cli()).toEqual({ ran: true, deleted: 0, waiting: 0 });

    const ch = await openClickHouse(undefined, config.chdbPath, config.clickhouseDatabase);
    try {
      const r = await ch.client.query({
        query: `SELECT count() AS n FROM ${config.clickhouseDatabase}.events WHERE distinct_id IN {ids:Array(String)}`,
        query_params: { ids: [anon, user, device] },
        format: 'JSONEachRow',
      });
      const rows = (await r.json()) as { n: number | string }[];
      expect(rows.map((x) => Number(x.n))).toEqual([0]);
    } finally {
      await ch.close();
    }
  }, 120_000);
});
