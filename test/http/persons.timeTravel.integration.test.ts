import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessDeps } from '../../commands/access/accessDeps.ts';
import { createProject } from '../../commands/access/createProject.ts';
import { personUuidFor } from '../../projections/persons/personsFold.ts';
import { capture as captureBatch } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { adminUserId, expectValidation } from './helpers.ts';

/**
 * Time travel end to end: real capture (one request per event, so the log order is the order
 * below), then GET persons/:id/?as_of= at several cut-offs against hand-computed states, as_of=now
 * against the live read model, properties_timeline, and the CLI's person history.
 */
let t: TestService;
const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

const T = {
  t0: '2024-01-01T10:00:00.000Z', // anon-tt created
  t0b: '2024-01-01T11:00:00.000Z', // user-tt created
  t1: '2024-01-02T10:00:00.000Z', // $set plan
  t2: '2024-01-03T10:00:00.000Z', // $set color, $set_once
  late: '2024-01-03T12:00:00.000Z', // stamped here, but captured after everything else
  t3: '2024-01-04T10:00:00.000Z', // $identify: anon-tt merged into user-tt
  t4: '2024-01-05T10:00:00.000Z', // $unset color
};
const UUID = {
  anon: '018cc251-f400-7000-8000-000000000001',
  user: '018cc251-f400-7000-8000-000000000002',
};
const EMAIL = 'ursula@example.com';

async function capture(
  apiKey: string,
  event: string,
  distinctId: string,
  timestamp: string,
  properties: Record<string, unknown> = {},
  uuid?: string,
) {
  await captureBatch(
    t,
    [
      {
        event,
        timestamp,
        ...(uuid ? { uuid } : {}),
        properties: { distinct_id: distinctId, $geoip_disable: true, ...properties },
      },
    ],
    { apiKey },
  );
}

const person = (id: number | string, query = '') =>
  t.api('GET', `/api/projects/${t.projectId}/persons/${id}/${query}`);
const asOf = async (id: number | string, at: string) => {
  const res = await person(id, `?as_of=${encodeURIComponent(at)}`);
  return res.status === 200 ? res.body : res.status;
};

beforeAll(async () => {
  t = await startTestService();
  // Another project's person comes first in the log (stamped in the future of every cut-off):
  // it takes integer id 1, so ids below are only right if the as-of fold numbers like the live one.
  const other = await createProject(accessDeps(t.service.ctx), {
    name: 'other',
    ownerUserId: await adminUserId(t),
  });
  await capture(other.projectApiKey, '$pageview', 'early-bird', '2024-02-01T00:00:00.000Z');

  const key = t.projectApiKey;
  await capture(
    key,
    '$pageview',
    'anon-tt',
    T.t0,
    { $set: { plan: 'free', color: 'red' }, $set_once: { first_seen: 'jan' } },
    UUID.anon,
  );
  await capture(
    key,
    'signed_up',
    'user-tt',
    T.t0b,
    { $set: { email: EMAIL, plan: 'trial' } },
    UUID.user,
  );
  await capture(key, '$set', 'anon-tt', T.t1, { $set: { plan: 'pro' } });
  await capture(key, '$set', 'anon-tt', T.t2, {
    $set: { color: 'blue' },
    $set_once: { first_seen: 'never', source: 'ad' },
  });
  await capture(key, '$identify', 'user-tt', T.t3, {
    $anon_distinct_id: 'anon-tt',
    $set: { name: 'Ursula' },
  });
  await capture(key, '$pageview', 'anon-tt', T.t4, { $unset: ['color'] });
  await capture(key, '$set', 'anon-tt', T.late, { $set: { tier: 'gold' } });
}, 60_000);
afterAll(async () => t?.close());

// Hand-computed states (capture.md §3.3-§3.5).
const anonAt = (props: Record<string, unknown>) => ({
  id: 2,
  uuid: personUuidFor(t.projectId, 'anon-tt'),
  name: 'anon-tt',
  distinct_ids: ['anon-tt'],
  is_identified: false,
  created_at: T.t0,
  properties: {
    first_seen: 'jan',
    plan: 'free',
    color: 'red',
    $creator_event_uuid: UUID.anon,
    ...props,
  },
});
const merged = {
  first_seen: 'jan',
  plan: 'trial',
  color: 'blue',
  source: 'ad',
  email: EMAIL,
  name: 'Ursula',
  $creator_event_uuid: UUID.user,
};
const userAt = (properties: Record<string, unknown>, identified: boolean) => ({
  id: 3,
  uuid: personUuidFor(t.projectId, 'user-tt'),
  name: EMAIL,
  is_identified: identified,
  distinct_ids: identified ? ['user-tt', 'anon-tt'] : ['user-tt'],
  created_at: identified ? T.t0 : T.t0b,
  properties,
});

describe('GET persons/:id/?as_of=', () => {
  it('the anonymous person, merged away today, as it was at each cut-off (by id and by uuid)', async () => {
    expect(await asOf(2, '2023-12-31T23:59:59Z')).toBe(404);
    expect(await asOf(2, T.t0)).toEqual(anonAt({})); // inclusive cut-off
    expect(await asOf(2, T.t1)).toEqual(anonAt({ plan: 'pro' }));
    expect(await asOf(personUuidFor(t.projectId, 'anon-tt'), T.t1)).toEqual(
      anonAt({ plan: 'pro' }),
    );
    expect(await asOf(2, T.t2)).toEqual(anonAt({ plan: 'pro', color: 'blue', source: 'ad' }));
    // the late event counts from its timestamp on, although it arrived last
    expect(await asOf(2, '2024-01-03T18:00:00Z')).toEqual(
      anonAt({ plan: 'pro', color: 'blue', source: 'ad', tier: 'gold' }),
    );
    expect(await asOf(2, T.t3)).toBe(404);
  });

  it('the identified person before and after the merge and the $unset', async () => {
    expect(await asOf(3, '2024-01-01T10:30:00Z')).toBe(404);
    expect(await asOf(3, T.t2)).toEqual(
      userAt({ email: EMAIL, plan: 'trial', $creator_event_uuid: UUID.user }, false),
    );
    expect(await asOf(3, T.t3)).toEqual(userAt({ ...merged, tier: 'gold' }, true));
    const { color: _, ...uncolored } = merged;
    expect(await asOf(3, T.t4)).toEqual(userAt({ ...uncolored, tier: 'gold' }, true));
  });

  it('as of now equals the live person (distinct id order aside: the projection orders by write batch)', async () => {
    const live = await person(3);
    expect(live.status, live.text).toBe(200);
    const now = await asOf(3, new Date().toISOString());
    const sorted = (p: { distinct_ids: string[] }) => ({
      ...p,
      distinct_ids: [...p.distinct_ids].sort(),
    });
    expect(sorted(now)).toEqual(sorted(live.body));
    expect(live.body.id).toBe(3);
  });

  it('is documented in the OpenAPI document, as_of and properties_timeline included', async () => {
    const doc = await t.api('GET', '/api/schema/', undefined, null);
    expect(doc.status).toBe(200);
    const params = doc.body.paths['/api/projects/{project_id}/persons/{id}/'].get.parameters.map(
      (p: { name: string }) => p.name,
    );
    expect(params).toContain('as_of');
    expect(
      doc.body.paths['/api/projects/{project_id}/persons/{id}/properties_timeline/'].get.responses[
        '200'
      ],
    ).toBeDefined();
  });

  it('refuses a time that does not parse; 404 for nobody', async () => {
    expectValidation(await person(3, '?as_of=not-a-time'), 'as_of');
    expect(await asOf(999, T.t4)).toBe(404);
  });
});

describe('GET persons/:id/properties_timeline/', () => {
  const timeline = async (query: Record<string, string>) => {
    const res = await t.api(
      'GET',
      `/api/projects/${t.projectId}/persons/3/properties_timeline/?${new URLSearchParams(query)}`,
    );
    expect(res.status, res.text).toBe(200);
    return res.body;
  };

  it("points where the crucial values change, over the events of all the person's distinct ids, in time order", async () => {
    const body = await timeline({
      properties: JSON.stringify([{ key: 'plan', value: 'x', type: 'person' }]),
      date_from: '2024-01-01',
      date_to: '2024-01-06',
    });
    expect(body.crucial_property_keys).toEqual(['plan']);
    expect(body.effective_date_from).toBe('2024-01-01T00:00:00+00:00');
    expect(body.effective_date_to).toBe('2024-01-06T23:59:59.999999+00:00');
    const { color: _, ...uncolored } = merged;
    expect(body.points).toEqual([
      {
        timestamp: '2024-01-01T10:00:00Z',
        properties: anonAt({}).properties,
        relevant_event_count: 1,
      },
      {
        timestamp: '2024-01-01T11:00:00Z',
        properties: { email: EMAIL, plan: 'trial', $creator_event_uuid: UUID.user },
        relevant_event_count: 1,
      },
      {
        timestamp: '2024-01-02T10:00:00Z',
        properties: anonAt({ plan: 'pro' }).properties,
        relevant_event_count: 2,
      },
      // the late event's snapshot is the person when it was processed: after the merge and the $unset
      {
        timestamp: '2024-01-03T12:00:00Z',
        properties: { ...uncolored, tier: 'gold' },
        relevant_event_count: 3,
      },
    ]);
  });

  it('narrowed to some events and dates', async () => {
    const body = await timeline({
      events: JSON.stringify([{ id: '$set' }]),
      properties: JSON.stringify([{ key: 'color', type: 'person' }]),
      date_from: '2024-01-02',
      date_to: '2024-01-02',
    });
    expect(body.effective_date_to).toBe('2024-01-02T23:59:59.999999+00:00');
    expect(body.points).toEqual([
      {
        timestamp: '2024-01-02T10:00:00Z',
        properties: anonAt({ plan: 'pro' }).properties,
        relevant_event_count: 1,
      },
    ]);
    expect(
      (await t.api('GET', `/api/projects/${t.projectId}/persons/2/properties_timeline/`)).status,
    ).toBe(404);
  });
});

describe('npm run cli -- person history', () => {
  it('prints each change of the person: time, event, property, before → after', async () => {
    const env = {
      ...process.env,
      DATABASE_URL: t.config.databaseUrl!,
      DATA_DIR: t.config.dataDir,
      EVENTSTORE_URL: '',
      CLICKHOUSE_URL: '',
      LOG_LEVEL: 'warn',
    };
    const cli = (...args: string[]) =>
      run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'person', 'history', ...args], {
        cwd: root,
        env,
      });
    const [json, text] = await Promise.all([
      cli('anon-tt', '--project', String(t.projectId), '--json'),
      cli('anon-tt', '--project', String(t.projectId)),
    ]);
    const history = JSON.parse(json.stdout.trim().split('\n').pop()!);
    expect(history.person).toEqual({
      id: 3,
      uuid: personUuidFor(t.projectId, 'user-tt'),
      distinct_ids: ['user-tt', 'anon-tt'],
    });
    const rows = history.changes.map((c: Record<string, unknown>) => [
      c.timestamp,
      c.event,
      c.distinct_id,
      c.property,
      c.before ?? null,
      c.after ?? null,
    ]);
    expect(rows).toEqual([
      [T.t0, '$pageview', 'anon-tt', 'first_seen', null, 'jan'],
      [T.t0, '$pageview', 'anon-tt', 'plan', null, 'free'],
      [T.t0, '$pageview', 'anon-tt', 'color', null, 'red'],
      [T.t0, '$pageview', 'anon-tt', '$creator_event_uuid', null, UUID.anon],
      [T.t0b, 'signed_up', 'user-tt', 'email', null, EMAIL],
      [T.t0b, 'signed_up', 'user-tt', 'plan', null, 'trial'],
      [T.t0b, 'signed_up', 'user-tt', '$creator_event_uuid', null, UUID.user],
      [T.t1, '$set', 'anon-tt', 'plan', 'free', 'pro'],
      [T.t2, '$set', 'anon-tt', 'color', 'red', 'blue'],
      [T.t2, '$set', 'anon-tt', 'source', null, 'ad'],
      [T.t3, '$identify', 'user-tt', 'first_seen', null, 'jan'],
      [T.t3, '$identify', 'user-tt', 'color', null, 'blue'],
      [T.t3, '$identify', 'user-tt', 'source', null, 'ad'],
      [T.t3, '$identify', 'user-tt', 'name', null, 'Ursula'],
      [T.t4, '$pageview', 'anon-tt', 'color', 'blue', null],
      [T.late, '$set', 'anon-tt', 'tier', null, 'gold'],
    ]);
    const lines = text.stdout.trim().split('\n');
    expect(lines[0]).toBe(
      `person 3 (${personUuidFor(t.projectId, 'user-tt')}), distinct ids: user-tt, anon-tt`,
    );
    expect(lines).toContain(`${T.t1}  $set  plan: "free" → "pro"`);
    expect(lines).toContain(`${T.t3}  $identify  [user-tt]  name: (unset) → "Ursula"`);
    expect(lines).toContain(`${T.t4}  $pageview  color: "blue" → (unset)`);
    expect(lines).toHaveLength(17);
  }, 60_000);
});
