import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectStream } from '../../commands/access/model/accessEvents.ts';
import {
  captureStream,
  ingestionWarningStream,
} from '../../commands/capture/model/eventCaptured.ts';
import { cohortStream } from '../../commands/cohorts/model/cohort.ts';
import { usageDashboardStream } from '../../commands/dashboards/model/dashboard.ts';
import { featureFlagStream } from '../../commands/featureFlags/model/featureFlag.ts';
import { personStream } from '../../commands/persons/model/personEvents.ts';
import { personUuidFor } from '../../projections/persons/personsFold.ts';
import { personsProjection } from '../../projections/persons/personsProjection.ts';
import { pgProjections } from '../../projections/registry.ts';
import { rebuildProjection } from '../../src/processing/rebuildProjection.ts';
import { rebuildThroughServer } from '../../src/processing/rebuildRequests.ts';
import { type ClickHouse, openClickHouse } from '../../src/runtime/clickhouse.ts';
import { startTestService, type TestService } from '../support/testService.ts';

/**
 * Issue #25: logs written by older releases hold NUL and lone surrogates (the log's `json` column
 * keeps them; the read models' jsonb and text refuse them). Every read model applies such an
 * event with U+FFFD in their place, live and in a rebuild (bulk fold and page by page, and the
 * ClickHouse replay in SQL), and gives the same rows each way.
 */
let t: TestService;
let ch: ClickHouse;
beforeAll(async () => {
  t = await startTestService();
  ch = await openClickHouse(undefined, t.config.chdbPath, t.config.clickhouseDatabase);
}, 120_000);
afterAll(async () => {
  await ch?.close();
  await t?.close();
});

// As the old release appended them: JSON.stringify writes `\ud800`, `\udc00` and `\u0000` escapes.
const OLD = 'x\ud800y\u0000z\udc00';
const NOW = 'x\uFFFDy\uFFFDz\uFFFD';
const AT = '2026-01-02T03:04:05.678Z';
const meta = { occurredAt: AT };
const ID = 9001;

/** the read models (runner names) that apply each appended event, and its position */
const applied: [string[], bigint][] = [];

async function appendOld(
  readModels: string[],
  streamName: string,
  type: string,
  data: Record<string, unknown>,
) {
  const { position } = await t.service.ctx.store.appendToStream(
    streamName,
    [{ type, data, metadata: meta }],
    { expectedRevision: 'any' },
  );
  applied.push([readModels, position]);
}

/** Each read model has applied the events it folds (a runner's position stays at its last one). */
async function caughtUp() {
  for (const [names, position] of applied)
    for (const name of names) {
      const runner = t.service.runners.get(name)!;
      expect(await runner.waitFor(position, 20_000), `${name} applies the old event`).toBe(true);
    }
}

/** Every row of every table of the Postgres read models, in a stable order. */
async function pgSnapshot() {
  const out: Record<string, unknown[]> = {};
  for (const p of pgProjections)
    for (const table of p.tables)
      out[table] = (
        await t.service.stores.pool.query(`SELECT * FROM ${table} t ORDER BY row_to_json(t)::text`)
      ).rows;
  return out;
}

const chEvents = async () =>
  (
    await (
      await ch.client.query({
        query: `SELECT * EXCEPT _timestamp FROM ${t.config.clickhouseDatabase}.events ORDER BY _offset`,
        format: 'JSONCompactEachRow',
      })
    ).json()
  ).map((row) => JSON.stringify(row));

describe('events an older release wrote with NUL and lone surrogates', () => {
  it('are applied by every read model with U+FFFD, live and rebuilt the same', {
    timeout: 180_000,
  }, async () => {
    const projectId = t.projectId;
    // (not in the distinct id: it is in the stream name, and an append with either in a stream
    // name failed then as now, so no Postgres log holds one there)
    const distinctId = `old-${randomUUID()}`;
    // the record's shape as capture writes it (the ClickHouse replay in SQL relies on it)
    const capturedOld = (event: string, properties: Record<string, unknown>) =>
      appendOld(
        ['persons', 'clickhouse:events'],
        captureStream(projectId, distinctId),
        'EventCaptured',
        {
          uuid: randomUUID(),
          projectId,
          event,
          distinctId,
          properties: { distinct_id: distinctId, ...properties },
          timestamp: AT,
          sentAt: null,
          receivedAt: AT,
          ip: null,
          elementsChain: '',
        },
      );
    // only in properties (the text the ClickHouse replay in SQL copies), then in the event's name
    await capturedOld('seen', { [OLD]: OLD, $set: { [OLD]: OLD, plan: OLD } });
    await capturedOld(`seen ${OLD}`, {});
    await capturedOld('clean', { plain: 'text' }); // the ClickHouse replay's SQL takes this one
    await appendOld(
      ['persons'],
      personStream(projectId, personUuidFor(projectId, distinctId)),
      'PersonPropertiesUpdated',
      {
        projectId,
        personUuid: personUuidFor(projectId, distinctId),
        distinctId,
        at: AT,
        set: { [`patched ${OLD}`]: OLD },
      },
    );
    await appendOld(['feature_flags'], featureFlagStream(ID), 'FeatureFlagCreated', {
      flagId: ID,
      projectId,
      fields: {
        name: OLD,
        key: 'old-flag',
        filters: {
          groups: [
            {
              properties: [{ key: OLD, type: 'person', operator: 'exact', value: [OLD] }],
              rollout_percentage: 100,
            },
          ],
          // JSON text whose string holds a raw lone surrogate
          payloads: { true: '"x\ud800y"' },
        },
        active: true,
        ensure_experience_continuity: false,
        rollback_conditions: null,
        performed_rollback: false,
        tags: [OLD],
        analytics_dashboards: [],
        has_enriched_analytics: false,
      },
      deleted: false,
      createdAt: AT,
      createdByUserId: null,
    });
    await appendOld(['cohorts'], cohortStream(ID), 'CohortCreated', {
      cohortId: ID,
      projectId,
      fields: {
        name: OLD,
        description: OLD,
        filters: {
          properties: {
            type: 'OR',
            values: [{ type: 'AND', values: [{ key: OLD, type: 'person', value: OLD }] }],
          },
        },
      },
      createdAt: AT,
      createdByUserId: null,
    });
    await appendOld(['dashboards'], usageDashboardStream(projectId, ID), 'UsageDashboardCreated', {
      dashboardId: ID,
      projectId,
      flagId: ID,
      name: OLD,
      description: OLD,
      tiles: [],
      createdAt: AT,
      createdByUserId: null,
    });
    await appendOld(
      ['ingestion_warnings'],
      ingestionWarningStream(projectId),
      'IngestionWarningRecorded',
      {
        projectId,
        type: `old ${OLD}`,
        eventUuid: null,
        details: { [OLD]: OLD },
        at: AT,
      },
    );
    await appendOld(['access'], projectStream(ID), 'ProjectCreated', {
      projectId: ID,
      name: OLD,
      apiKeyHash: `hash-${OLD}`,
      apiKeyMask: OLD,
      createdByUserId: 1,
      createdAt: AT,
    });
    await caughtUp();

    // What users see
    const person = await t.api(
      'GET',
      `/api/projects/${projectId}/persons/?distinct_id=${distinctId}`,
    );
    expect(person.body.results).toHaveLength(1);
    expect(person.body.results[0].properties).toMatchObject({
      [NOW]: NOW,
      plan: NOW,
      [`patched ${NOW}`]: NOW,
    });
    const flag = await t.api('GET', `/api/projects/${projectId}/feature_flags/${ID}/`);
    expect(flag.body).toMatchObject({
      name: NOW,
      tags: [NOW],
      filters: { groups: [{ properties: [{ key: NOW, value: [NOW] }] }] },
    });
    const cohort = await t.api('GET', `/api/projects/${projectId}/cohorts/${ID}/`);
    expect(cohort.body).toMatchObject({ name: NOW, description: NOW });
    const events = await t.api(
      'GET',
      `/api/projects/${projectId}/events/?distinct_id=${distinctId}`,
    );
    expect(events.body.results).toHaveLength(3);
    expect(events.body.results).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          event: 'seen',
          properties: expect.objectContaining({ [NOW]: NOW }),
        }),
        expect.objectContaining({ event: `seen ${NOW}` }),
      ]),
    );
    // and the rest, in their tables
    const live = await pgSnapshot();
    const text = JSON.stringify(live);
    // JSON.stringify writes a NUL or lone surrogate as an escape: none is left
    const found = text.match(/.{80}(?<!\\)\\u(?:0000|d[89a-f]).{40}/i);
    expect(found?.[0]).toBeUndefined();
    for (const table of [
      'persons',
      'feature_flags',
      'cohorts',
      'dashboards',
      'ingestion_warnings',
      'projects',
    ])
      expect(JSON.stringify(live[table]), table).toContain(NOW);

    // Rebuilt: the bulk fold, then page by page through `handle`
    for (const projection of pgProjections) {
      const rebuilt = await rebuildProjection(
        t.service.stores.store,
        t.service.stores.pool,
        projection,
      );
      expect(rebuilt.parked ?? 0, projection.name).toBe(0);
    }
    expect(await pgSnapshot()).toEqual(live);
    await rebuildProjection(t.service.stores.store, t.service.stores.pool, personsProjection, {
      bulkFold: false,
      batchSize: 2,
    });
    expect(await pgSnapshot()).toEqual(live);

    // ClickHouse: the replay in SQL leaves such a record to Node, which writes what the live one did
    const liveEvents = await chEvents();
    expect(liveEvents.join('\n')).toContain(`seen ${NOW}`);
    const replayed = await rebuildThroughServer(t.service.ctx.pool, 'events', { pollMs: 50 });
    expect(replayed.find((r) => r.name === 'clickhouse:events')?.replayed).toEqual({
      inClickHouse: 1,
      inNode: 2,
    });
    expect(await chEvents()).toEqual(liveEvents);
  });
});
