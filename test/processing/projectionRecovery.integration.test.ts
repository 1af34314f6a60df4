import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessDeps } from '../../commands/access/accessDeps.ts';
import { createRole } from '../../commands/access/createRole.ts';
import { accessProjection } from '../../projections/access/accessProjection.ts';
import { featureFlagsProjection } from '../../projections/featureFlags/featureFlagsProjection.ts';
import { createPool } from '../../src/db/postgres.ts';
import {
  checkpointId,
  type PgProjection,
  readCheckpoint,
} from '../../src/processing/projection.ts';
import { createProjectionRunner } from '../../src/processing/projectionRunner.ts';
import { rebuildProjection } from '../../src/processing/rebuildProjection.ts';
import { startTestService, type TestService } from '../support/testService.ts';

let t: TestService;
let databaseUrl: string;

const snapshot = async (pool: pg.Pool, schema: string, table: string, order = 'id') =>
  (await pool.query(`SELECT * FROM ${schema}.${table} ORDER BY ${order}`)).rows;

beforeAll(async () => {
  t = await startTestService();
  databaseUrl = t.config.databaseUrl!;
  const base = `/api/projects/${t.projectId}/feature_flags`;
  const { roleId } = await createRole(accessDeps(t.service.ctx), {
    name: 'Editors',
    featureFlagsAccessLevel: 37,
    memberUserIds: [],
    createdByUserId: null,
  });
  for (let i = 0; i < 25; i++) {
    const created = await t.api('POST', `${base}/`, {
      key: `flag-${i}`,
      name: `Flag ${i}`,
      filters: { groups: [{ properties: [], rollout_percentage: i * 4 }] },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    if (i % 2 === 0)
      expect(
        (await t.api('PATCH', `${base}/${id}/`, { name: `Renamed ${i}`, active: false })).status,
      ).toBe(200);
    if (i % 3 === 0)
      expect((await t.api('PATCH', `${base}/${id}/`, { deleted: true })).status).toBe(200);
    if (i % 6 === 0)
      expect((await t.api('PATCH', `${base}/${id}/`, { deleted: false })).status).toBe(200);
    if (i % 5 === 0)
      expect((await t.api('POST', `${base}/${id}/role_access/`, { role_id: roleId })).status).toBe(
        201,
      );
  }
});
afterAll(async () => t?.close());

describe('projections', () => {
  it('a projector killed mid-batch and restarted builds the same read model as the live one', async () => {
    const { store } = t.service.ctx;
    const pool = t.service.ctx.pool;
    await pool.query('DROP SCHEMA IF EXISTS crash CASCADE; CREATE SCHEMA crash');
    // A second copy of the read model in its own schema, with its own checkpoint.
    const crashPool = createPool(
      `${databaseUrl}?options=${encodeURIComponent('-c search_path=crash,public')}`,
    );
    await crashPool.query(featureFlagsProjection.schema);
    const copy: PgProjection = { ...featureFlagsProjection, version: 99 };
    let batches = 0;
    let crashed = false;
    const crashing: PgProjection = {
      ...copy,
      handle: async (events, tx) => {
        batches++;
        if (batches < 3 && !crashed) return copy.handle(events, tx);
        // Half the batch reaches the tables, then the process "dies" before the commit.
        await copy.handle(events.slice(0, Math.floor(events.length / 2)), tx);
        crashed = true;
        throw new Error('killed mid-batch');
      },
    };
    const first = createProjectionRunner(store, crashPool, crashing, { batchSize: 10 });
    await first.start();
    const deadline = Date.now() + 10_000;
    while (!crashed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await first.stop();
    expect(crashed).toBe(true);

    // Only whole batches were committed: the checkpoint sits on the last event of batch 2.
    const afterCrash = await readCheckpoint(pool, checkpointId(copy));
    const applied = await store.readAll({ maxCount: 20, filter: copy.filter });
    expect(afterCrash).toBe(applied[19]!.position);

    const restarted = createProjectionRunner(store, crashPool, copy, { batchSize: 10 });
    await restarted.start();
    expect(await restarted.waitFor(await store.headPosition(), 10_000)).toBe(true);
    await restarted.stop();
    await crashPool.end();

    for (const table of featureFlagsProjection.tables) {
      expect(await snapshot(pool, 'crash', table)).toEqual(await snapshot(pool, 'public', table));
    }
    expect((await snapshot(pool, 'public', 'feature_flags')).length).toBe(25);
  });

  it('rebuild replays from position 0 into fresh tables and gives an identical read model', async () => {
    const pool = t.service.ctx.pool;
    for (const projection of [featureFlagsProjection, accessProjection]) {
      const before = await Promise.all(
        projection.tables.map((table) => snapshot(pool, 'public', table, '1')),
      );
      const result = await rebuildProjection(t.service.ctx.store, pool, projection);
      expect(result.events).toBeGreaterThan(0);
      const after = await Promise.all(
        projection.tables.map((table) => snapshot(pool, 'public', table, '1')),
      );
      expect(after).toEqual(before);
    }
    // The live projector carries on after a rebuild.
    const created = await t.api('POST', `/api/projects/${t.projectId}/feature_flags/`, {
      key: 'after-rebuild',
    });
    expect(created.status).toBe(201);
    expect(
      (await t.api('GET', `/api/projects/${t.projectId}/feature_flags/${created.body.id}/`)).body
        .key,
    ).toBe('after-rebuild');
  });
});
