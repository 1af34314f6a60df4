import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureStream } from '../../commands/capture/model/eventCaptured.ts';
import { personsProjection } from '../../projections/persons/personsProjection.ts';
import { rebuildProjection } from '../../src/processing/rebuildProjection.ts';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';

/**
 * Issue #25: one event a read model cannot store never stops it. The event is parked (listed by
 * the API and the CLI), the read model goes on, readiness stays green, and a rebuild over the
 * same log parks the same event and builds the same read model.
 */
const root = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
let t: TestService;

/** readiness, polled all along: every answer it gave */
const readiness: number[] = [];
let polling: NodeJS.Timeout | undefined;

beforeAll(async () => {
  t = await startTestService();
  polling = setInterval(() => {
    void fetch(`${t.url}/_readyz`).then(
      (r) => readiness.push(r.status),
      () => readiness.push(0),
    );
  }, 25);
});
afterAll(async () => {
  clearInterval(polling);
  await t?.close();
});

const cli = async (...args: string[]) => {
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', ...args, '--json'],
    {
      cwd: root,
      env: {
        ...process.env,
        DATA_DIR: t.config.dataDir,
        DATABASE_URL: t.config.databaseUrl ?? '',
        LOG_LEVEL: 'warn',
      },
    },
  );
  return JSON.parse(stdout.trim().split('\n').pop()!);
};

/** the person of a distinct id, once the persons read model shows it (null after `ms`) */
async function personOf(distinctId: string, ms = 10_000) {
  const until = Date.now() + ms;
  for (;;) {
    const res = await t.api(
      'GET',
      `/api/projects/${t.projectId}/persons/?distinct_id=${encodeURIComponent(distinctId)}`,
    );
    expect(res.status).toBe(200);
    if (res.body.results.length > 0) return res.body.results[0];
    if (Date.now() > until) return null;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** the answer of `url` once its body is `expected` (health is cached for a second), or the last one */
async function answerOf(url: string, expected: unknown) {
  let last = { status: 0, body: undefined as unknown };
  for (let i = 0; i < 40; i++) {
    const res = await fetch(`${t.url}${url}`);
    last = { status: res.status, body: await res.json() };
    if (JSON.stringify(last.body) === JSON.stringify(expected)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return last;
}

async function snapshot(pool: pg.Pool) {
  const rows = async (sql: string) => (await pool.query(sql)).rows;
  return {
    persons: await rows(
      'SELECT id, uuid::text AS uuid, properties, is_identified, version FROM persons ORDER BY id',
    ),
    distinct_ids: await rows(
      'SELECT distinct_id, person_id FROM person_distinct_ids ORDER BY distinct_id COLLATE "C"',
    ),
    identities: await rows('SELECT id, distinct_id, position FROM person_identities ORDER BY id'),
  };
}

const parkedOf = async () =>
  (await t.service.stores.pool.query('SELECT * FROM parked_events ORDER BY read_model, position'))
    .rows;

describe('a poison event', () => {
  let poisonPosition: bigint;

  it('is parked, and the persons read model goes on with the next event', async () => {
    await capture(t, [{ event: '$identify', properties: { distinct_id: 'before-1' } }]);
    const before = await personOf('before-1');
    expect(before).not.toBeNull();

    // A REST write that took the read model down before: a lone surrogate in a property.
    const patched = await fetch(`${t.url}/api/projects/${t.projectId}/persons/${before.id}/`, {
      method: 'PATCH',
      headers: {
        authorization: `Bearer ${t.personalApiKey}`,
        'content-type': 'application/json',
      },
      body: '{"properties":{"k":"x\\ud800y"}}',
    });
    expect(patched.status).toBe(200);

    // As an older release wrote it (capture now cuts distinct ids at 200 characters): a distinct
    // id no index of the persons read model can hold ("index row requires 20016 bytes, maximum
    // size is 8191").
    const huge = randomBytes(15_000).toString('base64');
    const appended = await t.service.ctx.store.appendToStream(
      captureStream(t.projectId, 'poison'),
      [
        {
          type: 'EventCaptured',
          data: {
            uuid: '0190aaaa-0000-7000-8000-000000000001',
            projectId: t.projectId,
            event: '$pageview',
            distinctId: huge,
            properties: { $set: { plan: 'pro' } },
            timestamp: new Date().toISOString(),
            elementsChain: '',
            sentAt: null,
            receivedAt: new Date().toISOString(),
            ip: null,
          },
          metadata: { projectId: t.projectId, occurredAt: new Date().toISOString() },
        },
      ],
      { expectedRevision: 'any' },
    );
    poisonPosition = appended.position;

    await capture(t, [
      {
        event: '$identify',
        properties: { distinct_id: 'after-1', $set: { email: 'after@example.com' } },
      },
    ]);
    const after = await personOf('after-1');
    expect(after?.properties.email).toBe('after@example.com');
    expect((await personOf('before-1'))?.properties.k).toBe('x\uFFFDy');

    const parked = await parkedOf();
    expect(parked).toHaveLength(1);
    expect(parked[0]).toMatchObject({
      read_model: 'persons',
      position: String(poisonPosition),
      stream: captureStream(t.projectId, 'poison'),
      event_type: 'EventCaptured',
    });
    expect(parked[0].error).toMatch(/index row/);
    expect(readiness.length).toBeGreaterThan(10);
    expect(readiness.filter((s) => s !== 200)).toEqual([]);
  });

  it('is shown by GET /api/projections/, /_health and /_readyz (degraded, still ready)', async () => {
    const res = await t.api('GET', '/api/projections/');
    expect(res.status).toBe(200);
    const persons = res.body.read_models.find((m: { name: string }) => m.name === 'persons');
    expect(persons).toMatchObject({ parked_events: 1, pending_events: '0' });
    expect(res.body.parked).toEqual([
      expect.objectContaining({
        read_model: 'persons',
        position: String(poisonPosition),
        event_type: 'EventCaptured',
      }),
    ]);
    const degraded = ['projection persons: 1 parked event'];
    expect(await answerOf('/_readyz', { status: 'ready', degraded })).toEqual({
      status: 200,
      body: { status: 'ready', degraded },
    });
    expect(await answerOf('/_health', { status: 'ok', degraded })).toEqual({
      status: 200,
      body: { status: 'ok', degraded },
    });
  });

  it('is listed by the CLI', { timeout: 60_000 }, async () => {
    const listed = await cli('parked', 'list');
    expect(listed.parked).toEqual([
      expect.objectContaining({ read_model: 'persons', position: String(poisonPosition) }),
    ]);
    const none = await cli('parked', 'list', 'feature_flags');
    expect(none.parked).toEqual([]);
  });

  it('is parked again by a rebuild, which builds the same read model', {
    timeout: 120_000,
  }, async () => {
    const pool = t.service.stores.pool;
    const live = await snapshot(pool);
    const liveParked = await parkedOf();
    const result = await rebuildProjection(t.service.ctx.store, pool, personsProjection);
    expect(result.parked).toBe(1);
    expect(await snapshot(pool)).toEqual(live);
    const rebuiltParked = await parkedOf();
    // the same event, for the same reason (a rebuild parks at its first failure: no retries)
    const same = ({ parked_at: _, attempts: __, ...p }: Record<string, unknown>) => p;
    expect(rebuiltParked.map(same)).toEqual(liveParked.map(same));
    // and the live read model goes on after the swap
    await capture(t, [{ event: '$identify', properties: { distinct_id: 'after-rebuild' } }]);
    expect(await personOf('after-rebuild')).not.toBeNull();
  });

  it('can be dropped by the CLI once dealt with', { timeout: 60_000 }, async () => {
    const replay = await cli('parked', 'replay', 'persons', '--all');
    expect(replay.replayed).toEqual([
      expect.objectContaining({ position: String(poisonPosition), replayed: false }),
    ]);
    expect(await parkedOf()).toHaveLength(1);
    const dropped = await cli('parked', 'drop', 'persons', '--position', String(poisonPosition));
    expect(dropped).toEqual({ dropped: 1 });
    expect(await parkedOf()).toEqual([]);
    expect(await answerOf('/_readyz', { status: 'ready' })).toEqual({
      status: 200,
      body: { status: 'ready' },
    });
  });
});
