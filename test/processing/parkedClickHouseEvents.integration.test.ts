import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureStream } from '../../commands/capture/model/eventCaptured.ts';
import { rebuildThroughServer } from '../../src/processing/rebuildRequests.ts';
import { type ClickHouse, openClickHouse } from '../../src/runtime/clickhouse.ts';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';

/**
 * Issue #25, the ClickHouse side: an event ClickHouse refuses (a time no parser reads, as no
 * capture of ours writes it) is parked by the events read model, which goes on; `rebuild events`
 * (chDB reading the log, the refused row handed to Node) parks it again and writes the same rows.
 */
let t: TestService;
let ch: ClickHouse;
beforeAll(async () => {
  t = await startTestService();
  ch = await openClickHouse(undefined, t.config.chdbPath, t.config.clickhouseDatabase);
});
afterAll(async () => {
  await ch?.close();
  await t?.close();
});

const rows = async (query: string) =>
  (await (await ch.client.query({ query, format: 'JSONCompactEachRow' })).json()) as unknown[][];

const parkedOf = async (readModel: string) =>
  (
    await t.service.stores.pool.query(
      'SELECT position, event_type, error FROM parked_events WHERE read_model = $1 ORDER BY position',
      [readModel],
    )
  ).rows;

async function eventsOf(distinctId: string, ms = 15_000) {
  const until = Date.now() + ms;
  for (;;) {
    const res = await t.api(
      'GET',
      `/api/projects/${t.projectId}/events/?distinct_id=${encodeURIComponent(distinctId)}`,
    );
    expect(res.status).toBe(200);
    if (res.body.results.length > 0 || Date.now() > until) return res.body.results;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('an event ClickHouse refuses', () => {
  it('is parked by clickhouse:events, which goes on; a rebuild parks it again and writes the same rows', {
    timeout: 120_000,
  }, async () => {
    await capture(t, [{ event: 'before', properties: { distinct_id: 'ch-1' } }]);
    expect(await eventsOf('ch-1')).toHaveLength(1);
    const { position } = await t.service.ctx.store.appendToStream(
      captureStream(t.projectId, 'ch-poison'),
      [
        {
          type: 'EventCaptured',
          data: {
            uuid: randomUUID(),
            projectId: t.projectId,
            event: 'poison',
            distinctId: 'ch-poison',
            timestamp: 'the day after tomorrow',
            elementsChain: '',
            sentAt: null,
            receivedAt: 'the day after tomorrow',
            ip: null,
            properties: {},
          },
          metadata: { occurredAt: new Date().toISOString() },
        },
      ],
      { expectedRevision: 'any' },
    );
    await capture(t, [{ event: 'after', properties: { distinct_id: 'ch-2' } }]);
    expect(await eventsOf('ch-2')).toHaveLength(1);

    const parked = await parkedOf('clickhouse:events');
    expect(parked).toEqual([
      { position: String(position), event_type: 'EventCaptured', error: expect.any(String) },
    ]);
    const status = (await t.api('GET', '/api/projections/')).body;
    expect(
      status.read_models.find((m: { name: string }) => m.name === 'clickhouse:events'),
    ).toMatchObject({ parked_events: 1 });

    const events = `SELECT * EXCEPT _timestamp FROM ${t.config.clickhouseDatabase}.events ORDER BY _offset`;
    const live = await rows(events);
    await rebuildThroughServer(t.service.ctx.pool, 'events', { pollMs: 50 });
    expect(await rows(events)).toEqual(live);
    expect(await parkedOf('clickhouse:events')).toEqual(parked);

    await capture(t, [{ event: 'after rebuild', properties: { distinct_id: 'ch-3' } }]);
    expect(await eventsOf('ch-3')).toHaveLength(1);
  });
});
