import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsProjection } from '../../projections/events/eventsProjection.ts';
import { type ChProjection, chCheckpointId } from '../../src/processing/clickhouseProjection.ts';
import { createClickHouseProjectionRunner } from '../../src/processing/clickhouseProjectionRunner.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';

let t: TestService;
let ch: ClickHouse;
beforeAll(async () => {
  t = await startTestService();
  const { openClickHouse } = await import('../../src/runtime/clickhouse.ts');
  ch = await openClickHouse(undefined, t.config.chdbPath, `${t.config.clickhouseDatabase}_copy`);
});
afterAll(async () => {
  await ch?.close();
  await t?.close();
});

const batch = (n: number, tag: string) => ({
  api_key: t.projectApiKey,
  batch: Array.from({ length: n }, (_, i) => ({
    event: `e${i % 3}`,
    uuid: randomUUID(),
    properties: { distinct_id: `user-${i % 10}`, tag, i },
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
  })),
});

const post = async (body: { api_key: string; batch: unknown[] }) => {
  await capture(t, body.batch, { apiKey: body.api_key });
};

const countIn = async (c: ClickHouse, tag: string) => {
  const r = await c.client.query({
    query: `SELECT count() AS n, uniqExact(uuid) AS u FROM ${c.database}.events WHERE JSONExtractString(properties, 'tag') = {tag:String}`,
    query_params: { tag },
    format: 'JSONEachRow',
  });
  const [row] = (await r.json()) as { n: string; u: string }[];
  return { n: Number(row!.n), u: Number(row!.u) };
};

describe('ClickHouse events projection', () => {
  it('holds each event exactly once after being killed mid-batch, before or after its insert landed', async () => {
    const tag = `crash-${randomUUID()}`;
    for (let i = 0; i < 6; i++) await post(batch(50, tag));
    const head = await t.service.ctx.store.headPosition();
    expect(await t.service.runners.get('clickhouse:events')!.waitFor(head, 20_000)).toBe(true);
    expect(await countIn({ ...ch, database: t.config.clickhouseDatabase }, tag)).toEqual({
      n: 300,
      u: 300,
    });

    for (const when of ['after insert', 'before insert'] as const) {
      const copy: ChProjection = {
        ...eventsProjection,
        version: when === 'after insert' ? 98 : 99,
      };
      let batches = 0;
      const crashing: ChProjection = {
        ...copy,
        insert: async (c, events, token) => {
          if (++batches < 3) return copy.insert(c, events, token);
          if (when === 'after insert') await copy.insert(c, events, token);
          throw new Error(`killed ${when}`);
        },
      };
      const db = `${t.config.clickhouseDatabase}_copy_${copy.version}`;
      const target = { ...ch, database: db };
      await ch.client.command({ query: `CREATE DATABASE IF NOT EXISTS ${db}` });
      const first = createClickHouseProjectionRunner(
        t.service.ctx.store,
        t.service.ctx.pool,
        target,
        crashing,
        { batchSize: 40 },
      );
      await first.start();
      const deadline = Date.now() + 10_000;
      while (batches < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      await first.stop();
      const { rows } = await t.service.ctx.pool.query(
        'SELECT pending_to FROM projection_checkpoints WHERE id = $1',
        [chCheckpointId(copy)],
      );
      expect(rows[0].pending_to).not.toBeNull(); // died with a batch noted but not confirmed

      const restarted = createClickHouseProjectionRunner(
        t.service.ctx.store,
        t.service.ctx.pool,
        target,
        copy,
        { batchSize: 40 },
      );
      await restarted.start();
      expect(await restarted.waitFor(head, 20_000)).toBe(true);
      await restarted.stop();
      expect(await countIn(target, tag)).toEqual({ n: 300, u: 300 });
    }
  });

  it('a retried batch with the same uuids adds nothing, in the log or in ClickHouse', async () => {
    const tag = `retry-${randomUUID()}`;
    const body = batch(20, tag);
    await post(body);
    await post(body);
    const head = await t.service.ctx.store.headPosition();
    expect(await t.service.runners.get('clickhouse:events')!.waitFor(head, 20_000)).toBe(true);
    expect(await countIn({ ...ch, database: t.config.clickhouseDatabase }, tag)).toEqual({
      n: 20,
      u: 20,
    });
    const logged = (
      await t.service.ctx.store.readAll({ filter: { eventTypes: ['EventCaptured'] } })
    ).filter((e) => (e.data as { properties: { tag?: string } }).properties.tag === tag);
    expect(logged).toHaveLength(20);
  });
});
