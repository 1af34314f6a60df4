import { afterAll, describe, expect, it } from 'vitest';
import { personsProjectionFor } from '../../projections/persons/personsWorkers.ts';
import { pgProjectionsFor } from '../../projections/registry.ts';
import { loadConfig } from '../../src/config.ts';
import { rebuildProjection } from '../../src/processing/rebuildProjection.ts';
import { openStores } from '../../src/runtime/stores.ts';
import { capture } from '../support/capture.ts';
import { readModelsCaughtUp } from '../support/readModelsCaughtUp.ts';
import { createTestDatabase } from '../support/testDatabase.ts';
import { startTestService, type TestService } from '../support/testService.ts';

/**
 * The persons read model remembers how many ingestion workers built it (their ids and checkpoints
 * are laid out per partition): a start with another INGESTION_WORKERS is refused with an error
 * saying what to do, and `rebuild persons` run with the new count lays the tables out for it.
 */
type PersonView = { uuid: string; distinct_ids: string[]; properties: Record<string, unknown> };

const story = (i: number) => [
  { event: '$pageview', distinct_id: `count-${i}-anon`, properties: { $set: { seen: i } } },
  {
    event: '$identify',
    distinct_id: `count-${i}-user`,
    properties: { $anon_distinct_id: `count-${i}-anon`, $set: { email: `${i}@x.io`, k: i } },
  },
  // through the same distinct id: the order across two ids is not kept with several workers
  { event: '$set', distinct_id: `count-${i}-user`, properties: { $unset: ['k'] } },
];

describe('changing INGESTION_WORKERS', () => {
  const open: TestService[] = [];
  afterAll(async () => {
    for (const t of open) await t.close().catch(() => undefined);
  });
  const start = async (databaseUrl: string, workers: number) => {
    const t = await startTestService({ INGESTION_WORKERS: String(workers) }, { databaseUrl });
    open.push(t);
    return t;
  };
  /** The persons as a user lists them, by uuid (the integer ids are laid out per partition). */
  const persons = async (t: TestService) => {
    await readModelsCaughtUp(t);
    const res = await t.api('GET', `/api/projects/${t.projectId}/persons/?limit=1000`);
    expect(res.status, res.text).toBe(200);
    return (res.body.results as PersonView[])
      .map((p) => ({ uuid: p.uuid, ids: [...p.distinct_ids].sort(), properties: p.properties }))
      .sort((a, b) => a.uuid.localeCompare(b.uuid));
  };

  it('is refused at start, and `rebuild persons` with the new count makes the tables its own', {
    timeout: 120_000,
  }, async () => {
    const databaseUrl = await createTestDatabase();
    const one = await start(databaseUrl, 1);
    for (let i = 0; i < 20; i++) await capture(one, story(i));
    const before = await persons(one);
    expect(before).toHaveLength(20);
    await one.close();

    await expect(startTestService({ INGESTION_WORKERS: '3' }, { databaseUrl })).rejects.toThrow(
      'INGESTION_WORKERS is 3, but the persons read model was built with 1 ingestion worker: start with INGESTION_WORKERS=1, or stop the server and rebuild it for 3',
    );

    // what `INGESTION_WORKERS=3 npm run cli -- rebuild persons` does
    const config = loadConfig({ DATABASE_URL: databaseUrl, INGESTION_WORKERS: '3' });
    const stores = await openStores(config, pgProjectionsFor(3));
    await rebuildProjection(stores.store, stores.pool, personsProjectionFor(3));
    await stores.close();

    const three = await start(databaseUrl, 3);
    expect(await persons(three)).toEqual(before);
    for (let i = 20; i < 40; i++) await capture(three, story(i));
    const live = await persons(three);
    expect(live).toHaveLength(40);
    for (const p of live) {
      expect(p.ids).toHaveLength(2);
      expect(p.properties).toHaveProperty('seen');
      expect(p.properties).not.toHaveProperty('k');
    }
    // and back: one worker is refused on tables built by three
    await three.close();
    await expect(startTestService({ INGESTION_WORKERS: '1' }, { databaseUrl })).rejects.toThrow(
      'built with 3 ingestion workers',
    );
  });
});
