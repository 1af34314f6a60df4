import { randomUUID } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import LZString from 'lz-string';
import { PostHog as PostHogV4 } from 'posthog-node-v4';
import { PostHog as PostHogV5 } from 'posthog-node-v5';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type CaptureProxy,
  type RecordedExchange,
  startCaptureProxy,
} from '../support/captureProxy.ts';
import { type ReadbackEvent, readBackEvents, readFromLog } from '../support/captureReadback.ts';
import { startTestService, type TestService } from '../support/testService.ts';

/**
 * The real posthog-node clients, v4 (4.18.0) and v5 (5.70.0), pointed at the service by `host` only. A recording proxy
 * sits between them and the service so that the wire format each version uses is checked too (v4: JSON /batch/ or lz64
 * form /e/; v5: gzipped /batch/), and so that nothing but capture requests is sent (no flags are used).
 */
const KEY = 'phc_posthog_node_sdk_key_0001';

let t: TestService;
let proxy: CaptureProxy;
beforeAll(async () => {
  t = await startTestService({ INIT_PROJECT_API_KEY: KEY });
  proxy = await startCaptureProxy(t.url);
});
afterAll(async () => {
  await proxy?.close();
  await t?.close();
});
beforeEach(() => {
  proxy.exchanges.length = 0;
});

let seq = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++seq}`;

/** Everything a test sent must have been a capture request answered 200 `{"status":1}`. */
function expectOnlyCaptureTraffic(exchanges: RecordedExchange[], path: RegExp) {
  expect(exchanges.length).toBeGreaterThan(0);
  for (const x of exchanges) {
    expect(x.method).toBe('POST');
    expect(x.url).toMatch(path);
    expect(x.url).not.toMatch(/flags|decide/);
    expect(x.status, x.responseText).toBe(200);
    expect(JSON.parse(x.responseText)).toEqual({ status: 1 });
  }
}

/** The JSON payload of a recorded request, whatever its transport. */
function payloadOf(x: RecordedExchange): any {
  const type = String(x.headers['content-type'] ?? '');
  if (type.startsWith('application/x-www-form-urlencoded')) {
    const form = new URLSearchParams(x.body.toString('utf8'));
    expect(form.get('compression')).toBe('lz64');
    return JSON.parse(LZString.decompressFromBase64(form.get('data')!)!);
  }
  const raw = x.headers['content-encoding'] === 'gzip' ? gunzipSync(x.body) : x.body;
  return JSON.parse(raw.toString('utf8'));
}

const byEvent = (events: ReadbackEvent[], name: string) => {
  const found = events.find((e) => e.event === name);
  expect(found, `event ${name} among ${events.map((e) => e.event).join(', ')}`).toBeDefined();
  return found!;
};

type Flavour = {
  name: string;
  version: string;
  make: (options: Record<string, unknown>) => PostHogV4 | PostHogV5;
  /** the headers the /batch/ request must carry */
  batchHeaders: Record<string, unknown>;
};

const flavours: Flavour[] = [
  {
    name: 'posthog-node v4',
    version: '4.18.0',
    make: (options) => new PostHogV4(KEY, { host: proxy.url, fetchRetryCount: 0, ...options }),
    batchHeaders: { 'content-type': 'application/json', 'user-agent': 'posthog-node/4.18.0' },
  },
  {
    name: 'posthog-node v5',
    version: '5.70.0',
    make: (options) => new PostHogV5(KEY, { host: proxy.url, fetchRetryCount: 0, ...options }),
    batchHeaders: {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
      'user-agent': 'posthog-node/5.70.0',
    },
  },
];

describe.each(flavours)('$name', ({ version, make, batchHeaders }) => {
  it('capture (batched, sent on shutdown()): events, properties, groups, uuid and timestamp arrive as sent', async () => {
    const client = make({ flushAt: 20, flushInterval: 60_000 });
    const did = unique(`node${version}`);
    const uuid = randomUUID();
    const past = new Date(Date.now() - 3 * 24 * 3600_000);
    const properties = {
      plan: 'pro plus',
      total: 12.5,
      items: ['a', 'b'],
      nested: { ok: true },
      emoji: '\u{1F913}',
    };
    client.capture({
      distinctId: did,
      event: 'order placed',
      properties,
      groups: { company: 'acme' },
      uuid,
    });
    client.capture({ distinctId: did, event: 'backfilled', properties: { n: 1 }, timestamp: past });
    client.capture({ distinctId: did, event: 'third', properties: { n: 3 } });
    // v4 enqueues a capture a tick later (it may need flags first), so flush() right after capture() can find an
    // empty queue; shutdown() waits for that and sends what is queued.
    await client.shutdown();

    expectOnlyCaptureTraffic(proxy.exchanges, /^\/batch\/$/);
    expect(proxy.exchanges).toHaveLength(1);
    expect(proxy.exchanges[0]!.headers).toMatchObject(batchHeaders);
    const envelope = payloadOf(proxy.exchanges[0]!);
    expect(envelope).toMatchObject({
      api_key: KEY,
      batch: expect.any(Array),
      sent_at: expect.any(String),
    });
    expect(envelope.batch).toHaveLength(3);

    const got = await readBackEvents(t, did, { count: 3 });
    const order = byEvent(got, 'order placed');
    expect(order.uuid).toBe(uuid);
    expect(order.properties).toMatchObject({
      ...properties,
      $groups: { company: 'acme' },
      $lib: 'posthog-node',
      $lib_version: version,
      // posthog-node disables GeoIP by default: the server's address is not the user's.
      $geoip_disable: true,
    });
    expect(
      Object.keys(order.properties).filter(
        (k) => k.startsWith('$geoip_') && k !== '$geoip_disable',
      ),
    ).toEqual([]);
    // Same clock on both ends: skew correction moves the timestamp by the time the request took, no more.
    const backfilled = Date.parse(byEvent(got, 'backfilled').timestamp);
    expect(backfilled).toBeGreaterThanOrEqual(past.getTime());
    expect(backfilled).toBeLessThan(past.getTime() + 5_000);
    expect(byEvent(got, 'third').properties).toMatchObject({ n: 3, $lib: 'posthog-node' });
  });

  it('flush() sends what is queued', async () => {
    const client = make({ flushAt: 20, flushInterval: 60_000 });
    const did = unique(`flush${version}`);
    client.capture({ distinctId: did, event: 'flushed', properties: { via: 'flush' } });
    await new Promise((r) => setTimeout(r, 50)); // let v4 enqueue it
    await client.flush();
    expectOnlyCaptureTraffic(proxy.exchanges, /^\/batch\/$/);
    expect((await readBackEvents(t, did))[0]!.properties).toMatchObject({
      via: 'flush',
      $lib_version: version,
    });
    await client.shutdown();
  });

  it('identify, alias and groupIdentify (flushAt: 1)', async () => {
    const client = make({ flushAt: 1 });
    const did = unique(`person${version}`);
    const alias = unique('alias');
    const group = unique('acme');
    client.identify({ distinctId: did, properties: { email: 'max@example.com', name: 'Max' } });
    client.identify({
      distinctId: did,
      properties: { $set: { plan: 'pro' }, $set_once: { first_seen: '2024-01-01' } },
    });
    client.alias({ distinctId: did, alias });
    client.groupIdentify({
      groupType: 'company',
      groupKey: group,
      properties: { name: 'Acme', employees: 40 },
    });
    await client.shutdown();

    expectOnlyCaptureTraffic(proxy.exchanges, /^\/batch\/$/);
    const got = await readBackEvents(t, did, { count: 3 });
    const identifies = got.filter((e) => e.event === '$identify');
    expect(identifies).toHaveLength(2);
    expect(identifies.map((e) => e.properties.$set)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ email: 'max@example.com', name: 'Max' }),
        expect.objectContaining({ plan: 'pro' }),
      ]),
    );
    expect(
      identifies.find((e) => (e.properties.$set as any)?.plan === 'pro')!.properties.$set_once,
    ).toMatchObject({ first_seen: '2024-01-01' });
    expect(byEvent(got, '$create_alias').properties).toMatchObject({
      alias,
      distinct_id: did,
      $lib_version: version,
    });

    const [groupEvent] = await readBackEvents(t, `$company_${group}`);
    expect(groupEvent).toMatchObject({
      event: '$groupidentify',
      properties: {
        $group_type: 'company',
        $group_key: group,
        $group_set: { name: 'Acme', employees: 40 },
      },
    });
  });

  it('an unknown project key: the SDK is answered 401 and nothing is stored', async () => {
    const errors: unknown[] = [];
    const client = make({ flushAt: 1 });
    (client as PostHogV4).on('error', (e: unknown) => errors.push(e));
    const wrong = version.startsWith('4')
      ? new PostHogV4('phc_wrong_key', { host: proxy.url, flushAt: 1, fetchRetryCount: 0 })
      : new PostHogV5('phc_wrong_key', { host: proxy.url, flushAt: 1, fetchRetryCount: 0 });
    const wrongErrors: unknown[] = [];
    (wrong as PostHogV4).on('error', (e: unknown) => wrongErrors.push(e));
    const did = unique('wrongkey');
    wrong.capture({ distinctId: did, event: 'lost' });
    await wrong.shutdown();
    await client.shutdown();
    expect(proxy.exchanges.map((x) => x.status)).toContain(401);
    const rejected = proxy.exchanges.find((x) => x.status === 401)!;
    expect(JSON.parse(rejected.responseText)).toMatchObject({
      type: 'authentication_error',
      code: 'invalid_api_key',
      attr: null,
    });
    expect(wrongErrors.length).toBeGreaterThan(0);
    expect(errors).toEqual([]);
    expect(await readFromLog(t, { distinctId: did })).toEqual([]);
  });
});

describe('posthog-node v4, captureMode: form', () => {
  it('sends lz64 in a urlencoded form to /e/?ip=1&_=…&v=4.18.0; events arrive with their properties and sent_at', async () => {
    const client = new PostHogV4(KEY, {
      host: proxy.url,
      captureMode: 'form',
      flushAt: 20,
      flushInterval: 60_000,
      fetchRetryCount: 0,
    });
    const did = unique('form');
    const properties = { plan: 'pro plus', formula: 'a+b = c & d', emoji: 'caf\u00e9 \u{1F913}' };
    client.capture({ distinctId: did, event: 'form event', properties });
    client.identify({ distinctId: did, properties: { email: 'form@example.com' } });
    client.alias({ distinctId: did, alias: unique('form-alias') });
    await client.shutdown();

    expectOnlyCaptureTraffic(proxy.exchanges, /^\/e\/\?ip=1&_=\d+&v=4\.18\.0$/);
    const x = proxy.exchanges[0]!;
    expect(x.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded/);
    expect(x.url).not.toMatch(/compression/); // the hint is in the form, not the URL
    const envelope = payloadOf(x);
    expect(envelope.api_key).toBe(KEY);

    const got = await readBackEvents(t, did, { count: 3 });
    expect(byEvent(got, 'form event').properties).toMatchObject({
      ...properties,
      $lib: 'posthog-node',
      $lib_version: '4.18.0',
      $sent_at: envelope.sent_at,
    });
    expect(byEvent(got, '$identify').properties.$set).toMatchObject({ email: 'form@example.com' });
    expect(byEvent(got, '$create_alias').properties.distinct_id).toBe(did);
  });
});

describe('posthog-node v5 specifics', () => {
  it('disableCompression: plain JSON to /batch/', async () => {
    const client = new PostHogV5(KEY, {
      host: proxy.url,
      disableCompression: true,
      flushAt: 20,
      flushInterval: 60_000,
      fetchRetryCount: 0,
    });
    const did = unique('plain5');
    client.capture({ distinctId: did, event: 'uncompressed', properties: { a: 1 } });
    await client.shutdown();
    expectOnlyCaptureTraffic(proxy.exchanges, /^\/batch\/$/);
    expect(proxy.exchanges[0]!.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(proxy.exchanges[0]!.body.toString('utf8')).batch).toHaveLength(1);
    expect((await readBackEvents(t, did))[0]!.properties).toMatchObject({
      a: 1,
      $lib_version: '5.70.0',
    });
  });

  it('captureImmediate and historicalMigration', async () => {
    const client = new PostHogV5(KEY, {
      host: proxy.url,
      historicalMigration: true,
      fetchRetryCount: 0,
    });
    const did = unique('immediate5');
    const at = new Date('2023-03-04T05:06:07.089Z');
    await client.captureImmediate({
      distinctId: did,
      event: 'right now',
      properties: { imported: true },
      timestamp: at,
    });
    expectOnlyCaptureTraffic(proxy.exchanges, /^\/batch\/$/);
    expect(payloadOf(proxy.exchanges[0]!)).toMatchObject({ historical_migration: true });
    const [e] = await readBackEvents(t, did);
    expect(e!.properties).toMatchObject({ imported: true });
    expect(Date.parse(e!.timestamp)).toBeGreaterThanOrEqual(at.getTime());
    expect(Date.parse(e!.timestamp)).toBeLessThan(at.getTime() + 5_000);
    await client.shutdown();
  });

  it('a large batch (more than maxBatchSize) is sent in several requests, every event stored once', async () => {
    const client = new PostHogV5(KEY, {
      host: proxy.url,
      flushAt: 50,
      maxBatchSize: 50,
      flushInterval: 60_000,
      fetchRetryCount: 0,
    });
    const did = unique('many5');
    for (let i = 0; i < 120; i++)
      client.capture({ distinctId: did, event: 'many', properties: { i } });
    await client.shutdown();
    expectOnlyCaptureTraffic(proxy.exchanges, /^\/batch\/$/);
    expect(proxy.exchanges.length).toBeGreaterThanOrEqual(3);
    const sizes = proxy.exchanges.map((x) => payloadOf(x).batch.length as number);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(50);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(120);
    const got = await readBackEvents(t, did, { count: 120 });
    expect(got).toHaveLength(120);
    expect(new Set(got.map((e) => e.properties.i)).size).toBe(120);
  });
});
