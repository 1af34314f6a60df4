import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { personEventTypes } from '../../commands/persons/model/personEvents.ts';
import { personsProjection } from '../../projections/persons/personsProjection.ts';
import { PERSON_LOG_TYPES } from '../../queries/personTimeTravel/logReplay.ts';
import { PersonAsOfFold, personAsOf } from '../../queries/personTimeTravel/personAsOf.ts';
import { timeTravelDeps } from '../../queries/personTimeTravel/personSlice.ts';
import { readAllEvents } from '../../src/eventStore/readAllEvents.ts';
import { rebuildProjection } from '../../src/processing/rebuildProjection.ts';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';

/**
 * The persons read model is a deterministic fold of the log: built live (small batches, cut
 * wherever capture traffic happened to be) and rebuilt from scratch (batches of 1000), it must come
 * out the same row for row — integer ids, uuids, properties, versions, distinct ids and their order.
 */
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

/** mulberry32: the same "random" traffic on every run. */
function prng(seed: number) {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return { next, int, pick: <T>(xs: readonly T[]): T => xs[int(xs.length)]! };
}

type Item = { event: string; timestamp: string; properties: Record<string, unknown> };

function traffic(count: number): Item[] {
  const r = prng(4242);
  const anon = (i: number) =>
    i % 2
      ? `anon-${i}`
      : `0190${String(i).padStart(4, '0')}-7e1a-7b2c-8d3e-${String(i).padStart(12, '0')}`;
  const user = (i: number) => `user-${i}`;
  const anyId = () => (r.next() < 0.75 ? anon(r.int(2500)) : user(r.int(250)));
  const types = ['company', 'team', 'project', 'org', 'store', 'sixth', 'seventh'];
  const keys = ['k0', 'k1', 'k2', 'k3', 'k4'];
  const items: Item[] = [];
  const at = (i: number) =>
    new Date(Date.UTC(2024, 4, 1) + i * 1000 + r.int(120_000) - 60_000).toISOString();
  for (let i = 0; i < count; i++) {
    const roll = r.next();
    const ev = (event: string, distinct_id: string, properties: Record<string, unknown> = {}) =>
      items.push({
        event,
        timestamp: at(i),
        properties: { distinct_id, $geoip_disable: true, ...properties },
      });
    const props = () =>
      Object.fromEntries(
        keys
          .filter(() => r.next() < 0.3)
          .map((k) => [k, r.pick([1, 2, 'x', 'y', null, { nested: r.int(3) }])]),
      );
    if (roll < 0.4)
      ev('$pageview', anyId(), {
        $browser: r.pick(['Chrome', 'Firefox', 'Safari']),
        $current_url: `https://shop.example/${r.int(20)}`,
        ...(r.next() < 0.2 ? { utm_source: r.pick(['ads', 'news']) } : {}),
      });
    else if (roll < 0.52) {
      const u = user(r.int(250));
      ev('$identify', u, {
        $anon_distinct_id: r.next() < 0.9 ? anon(r.int(2500)) : user(r.int(250)),
        $set: { email: `${u}@example.com`, ...props() },
        $set_once: { first_seen: at(i) },
      });
    } else if (roll < 0.57)
      ev('$create_alias', user(r.int(250)), { alias: anyId(), $set: props() });
    else if (roll < 0.59) ev('$merge_dangerously', user(r.int(250)), { alias: user(r.int(250)) });
    else if (roll < 0.74)
      ev(r.pick(['$set', 'clicked']), anyId(), {
        $set: props(),
        $set_once: props(),
        ...(r.next() < 0.4 ? { $unset: keys.filter(() => r.next() < 0.3) } : {}),
      });
    else if (roll < 0.79) {
      const type = r.pick(types);
      ev('$groupidentify', `$${type}_g${r.int(10)}`, {
        $group_type: type,
        $group_key: `g${r.int(10)}`,
        $group_set: props(),
      });
    } else if (roll < 0.87)
      ev('in group', anyId(), { $groups: { [r.pick(types)]: `g${r.int(10)}` } });
    else if (roll < 0.95)
      ev('$pageview', r.next() < 0.5 ? `pl-${r.int(300)}` : anyId(), {
        $process_person_profile: false,
        $set: { personless: true },
      });
    else
      ev('$identify', r.next() < 0.5 ? user(r.int(250)) : r.pick(['anonymous', 'null']), {
        $anon_distinct_id: r.pick(['anonymous', 'null', '0', 'undefined', anon(r.int(2500))]),
      });
  }
  return items;
}

async function post(batch: Item[]): Promise<void> {
  await capture(t, batch);
}

async function settle(): Promise<void> {
  const [newest] = await t.service.ctx.store.readAll({
    direction: 'backwards',
    before: 'end',
    maxCount: 1,
    filter: { eventTypes: ['EventCaptured', ...personEventTypes] },
  });
  if (newest)
    expect(await t.service.runners.get('persons')!.waitFor(newest.position, 60_000)).toBe(true);
}

async function snapshot(pool: pg.Pool) {
  const rows = async (sql: string) => (await pool.query(sql)).rows;
  return {
    persons: await rows(
      'SELECT id, project_id, uuid::text AS uuid, properties, is_identified, created_at, version FROM persons ORDER BY id',
    ),
    person_distinct_ids: await rows(
      'SELECT project_id, distinct_id, person_id FROM person_distinct_ids ORDER BY project_id, distinct_id COLLATE "C"',
    ),
    distinct_id_order: await rows(
      'SELECT person_id, array_agg(distinct_id ORDER BY ord) AS ids FROM person_distinct_ids GROUP BY person_id ORDER BY person_id',
    ),
    groups: await rows(
      'SELECT project_id, group_type_index, group_key, properties, created_at, version FROM groups ORDER BY project_id, group_type_index, group_key COLLATE "C"',
    ),
    group_type_mapping: await rows(
      'SELECT project_id, group_type, group_type_index FROM group_type_mapping ORDER BY project_id, group_type_index',
    ),
    person_ingestion_warnings: await rows(
      'SELECT id::text AS id, project_id, type, event_uuid, details, at FROM person_ingestion_warnings ORDER BY id',
    ),
    // time travel's index
    person_identities: await rows(
      'SELECT id, project_id, uuid::text AS uuid, distinct_id, position FROM person_identities ORDER BY id',
    ),
    person_links: await rows(
      'SELECT project_id, distinct_id, other_id FROM person_links ORDER BY project_id, distinct_id COLLATE "C", other_id COLLATE "C"',
    ),
  };
}

/** Row-by-row comparison that names the first differing row of each table. */
function expectSameRows(before: Record<string, unknown[]>, after: Record<string, unknown[]>) {
  for (const table of Object.keys(before)) {
    const a = before[table]!;
    const b = after[table]!;
    const first = a.findIndex((row, i) => JSON.stringify(row) !== JSON.stringify(b[i]));
    expect({ table, row: first, live: a[first], rebuilt: b[first] }).toEqual({
      table,
      row: -1,
      live: undefined,
      rebuilt: undefined,
    });
    expect(b.length, `${table}: row count`).toBe(a.length);
  }
}

describe('persons projection rebuild', () => {
  let live: Awaited<ReturnType<typeof snapshot>>;

  it('live and rebuilt read models are identical after thousands of mixed events', {
    timeout: 180_000,
  }, async () => {
    // A merge cut across live batches: ids created in one batch, merged in a later one.
    await post([
      {
        event: '$pageview',
        timestamp: '2024-04-30T00:00:00.000Z',
        properties: { distinct_id: 'cut-anon' },
      },
      {
        event: '$pageview',
        timestamp: '2024-04-30T00:00:01.000Z',
        properties: { distinct_id: 'cut-user' },
      },
    ]);
    await settle();
    await post([
      {
        event: '$identify',
        timestamp: '2024-04-30T00:00:02.000Z',
        properties: { distinct_id: 'cut-user', $anon_distinct_id: 'cut-anon' },
      },
    ]);
    await settle();

    // Split, then delete the split-off person, then the id comes back: its deterministic uuid is
    // still held by the person that kept the other id, so the new person must get another one.
    await post([
      {
        event: '$pageview',
        timestamp: '2024-04-30T00:01:00.000Z',
        properties: { distinct_id: 'dup-x' },
      },
    ]);
    await post([
      {
        event: '$identify',
        timestamp: '2024-04-30T00:01:01.000Z',
        properties: { distinct_id: 'dup-y', $anon_distinct_id: 'dup-x' },
      },
    ]);
    await settle();
    const kept = (await t.api('GET', `/api/projects/${t.projectId}/persons/?distinct_id=dup-y`))
      .body.results[0];
    expect(
      (
        await t.api('POST', `/api/projects/${t.projectId}/persons/${kept.id}/split/`, {
          main_distinct_id: 'dup-y',
        })
      ).status,
    ).toBeLessThan(300);
    await settle();
    const splitOff = (await t.api('GET', `/api/projects/${t.projectId}/persons/?distinct_id=dup-x`))
      .body.results[0];
    expect(splitOff.id).not.toBe(kept.id);
    expect(
      (await t.api('DELETE', `/api/projects/${t.projectId}/persons/${splitOff.id}/`)).status,
    ).toBe(204);
    await settle();
    await post([
      {
        event: '$pageview',
        timestamp: '2024-04-30T00:01:02.000Z',
        properties: { distinct_id: 'dup-x' },
      },
    ]);
    await settle();
    expect
      .soft(
        (await t.api('GET', `/api/projects/${t.projectId}/persons/?search=${kept.uuid}`)).body
          .count,
      )
      .toBe(1);

    const items = traffic(6000);
    const r = prng(7);
    for (let i = 0, n = 0; i < items.length; n++) {
      const sizes = [1 + r.int(150), 1 + r.int(150)];
      const a = items.slice(i, i + sizes[0]!);
      const b = items.slice(i + sizes[0]!, i + sizes[0]! + sizes[1]!);
      i += a.length + b.length;
      await Promise.all([post(a), b.length > 0 ? post(b) : Promise.resolve()]); // two requests in flight
      if (n % 4 === 0) await settle(); // cut the live projection's batches here and there
    }
    await settle();
    const pool = t.service.stores.pool;
    live = await snapshot(pool);

    // The traffic exercised what it is meant to.
    expect(live.persons.length).toBeGreaterThan(1000);
    expect(live.distinct_id_order.filter((p: any) => p.ids.length > 2).length).toBeGreaterThan(20);
    expect(live.persons.filter((p: any) => p.is_identified).length).toBeGreaterThan(100);
    expect(live.group_type_mapping.map((g: any) => g.group_type_index)).toEqual([0, 1, 2, 3, 4]);
    expect(live.groups.length).toBeGreaterThan(20);
    const warningTypes = new Set(live.person_ingestion_warnings.map((w: any) => w.type));
    expect([...warningTypes].sort()).toEqual([
      'cannot_merge_already_identified',
      'cannot_merge_with_illegal_distinct_id',
    ]);
    expect(live.person_distinct_ids.some((m: any) => m.distinct_id.startsWith('pl-'))).toBe(false);
    expect(new Set(live.persons.map((p: any) => p.uuid)).size).toBe(live.persons.length);
    const cut = live.distinct_id_order.find((p: any) => p.ids.includes('cut-user')) as {
      ids: string[];
    };
    expect(cut.ids).toEqual(['cut-user', 'cut-anon']); // attachment order: the target's own ids, then those merged in

    // Folded in memory, saved once at the end (secondary indexes dropped meanwhile, built after)
    const indexes = async () =>
      (
        await pool.query<{ indexdef: string }>(
          "SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename LIKE 'person%' ORDER BY indexname",
        )
      ).rows.map((r) => r.indexdef);
    const liveIndexes = await indexes();
    expect(liveIndexes.length).toBeGreaterThan(8);
    const result = await rebuildProjection(t.service.stores.store, pool, personsProjection);
    expect(result.events).toBeGreaterThan(6000);
    expectSameRows(live, await snapshot(pool));
    expect(await indexes()).toEqual(liveIndexes);
    // The in-memory fold outgrows its bound after a few pages, is saved, and the rest goes page by
    // page through the live path (loading what each page touches): the same tables.
    const paged = await rebuildProjection(t.service.stores.store, pool, personsProjection, {
      batchSize: 500,
      maxFoldEntries: 600,
    });
    expect(paged.events).toBe(result.events);
    expectSameRows(live, await snapshot(pool));
    expect(await indexes()).toEqual(liveIndexes);
  });

  it('time travel on this traffic: each person from its slice of the log, as the whole-log fold has it', {
    timeout: 120_000,
  }, async () => {
    const store = t.service.ctx.store;
    const events = [];
    for await (const e of readAllEvents(store, { eventTypes: PERSON_LOG_TYPES })) events.push(e);
    const { rows } = await t.service.stores.pool.query<{ id: number }>(
      'SELECT id FROM person_identities WHERE project_id = $1 ORDER BY id',
      [t.projectId],
    );
    const r = prng(11);
    const sample = rows.filter(() => r.next() < 0.025).map((row) => row.id);
    expect(sample.length).toBeGreaterThan(20);
    // The random traffic links about 950 distinct ids into one component (1,400 streams per answer):
    // the sample crosses both that and the small ones.
    const deps = timeTravelDeps(t.service.ctx);
    for (const at of [
      '2024-05-01T00:20:00.000Z',
      '2024-05-01T01:00:00.000Z',
      '9999-01-01T00:00:00Z',
    ]) {
      const whole = new PersonAsOfFold(Date.parse(at));
      for (const e of events) whole.apply(e);
      for (const id of sample) {
        const ref = { kind: 'id', id } as const;
        expect(await personAsOf(deps, t.projectId, ref, at), `person ${id} as of ${at}`).toEqual(
          whole.find(t.projectId, ref),
        );
      }
    }
  });

  it('the CSV export streams every person, across its internal pages', async () => {
    const res = await fetch(`${t.url}/api/projects/${t.projectId}/persons/?format=csv`, {
      headers: { authorization: `Bearer ${t.personalApiKey}` },
    });
    expect(res.status).toBe(200);
    const lines = (await res.text()).split('\n').filter((l) => /^\d+,/.test(l));
    const ids = lines.map((l) => Number(l.split(',')[0]));
    expect(new Set(ids).size).toBe(live.persons.length);
    expect([...ids].sort((x, y) => x - y)).toEqual(live.persons.map((p: any) => p.id));
  });
});
