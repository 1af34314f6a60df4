import { gzipSync as zlibGzip } from 'node:zlib';
import { gzipSync, strToU8 } from 'fflate';
import LZString from 'lz-string';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { captureRequest } from '../../support/captureRequest.ts';
import {
  type CaptureUseCase,
  startCaptureUseCase,
  storedEvents,
} from '../../support/captureUseCase.ts';

/**
 * Requests built the way PostHog's SDKs build them (capture.md §1.5, §1.6), with the libraries they use: fflate for
 * posthog-js's gzip, lz-string for its old lz64 mode and posthog-node v4's form mode, node zlib for posthog-node v5.
 * They go through the capture use case (captureEvents) over a test service's Postgres. Each test has a project of its
 * own: the log keeps an event (a uuid, in a project) once, and several tests send the same events.
 */
let KEY = '';
let projects = 0;
const NOW = new Date('2024-06-02T02:10:00.000Z');
const SENT_AT = '2024-06-02T02:09:58.000Z'; // the client's clock is 2 s behind the server's NOW

const jsEvent = (n: number) => ({
  uuid: `0190a0b0-0000-7000-8000-00000000000${n}`,
  event: '$pageview',
  properties: {
    token: KEY,
    distinct_id: 'anon-1',
    $lib: 'web',
    $current_url: 'https://example.com/\u{1F913}',
  },
  timestamp: '2024-06-02T02:09:50.000Z',
});
const jsBatch = () => [jsEvent(1), jsEvent(2)];
const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
const base64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

let useCase: CaptureUseCase;
beforeAll(async () => {
  useCase = await startCaptureUseCase([], NOW);
});
afterAll(async () => useCase?.close());
beforeEach(async () => {
  KEY = `phc_wire_${++projects}`;
  await useCase.addProject(KEY);
});

const run = (opts: Parameters<typeof captureRequest>[0]) => useCase.capture(captureRequest(opts));
const events = async (opts: Parameters<typeof captureRequest>[0]) => storedEvents(await run(opts));

describe('posthog-js', () => {
  it('1.200: gzip-js array to /e/ with ip, _ and ver in the query', async () => {
    const body = Buffer.from(gzipSync(strToU8(JSON.stringify(jsBatch())), { mtime: 0 }));
    const got = await events({
      path: '/e/',
      query: `ip=1&_=${Date.parse(SENT_AT)}&ver=1.200.0&compression=gzip-js`,
      headers: { 'Content-Type': 'text/plain' },
      body,
    });
    expect(got.map((e) => e.uuid)).toEqual([jsEvent(1).uuid, jsEvent(2).uuid]);
    // skew correction with `_` as sent_at: 02:09:50 on a clock 2 s slow → 02:09:52
    expect(got[0]).toMatchObject({
      distinctId: 'anon-1',
      timestamp: '2024-06-02T02:09:52.000Z',
      sentAt: SENT_AT,
    });
    expect(got[0]!.properties.$current_url).toBe('https://example.com/\u{1F913}');
  });

  it('≥ 1.398.2: gzip without any hint; ≥ 1.407.3: batch envelope with sent_at, to /i/v0/e/', async () => {
    const envelope = { api_key: KEY, batch: jsBatch(), sent_at: SENT_AT };
    const body = Buffer.from(gzipSync(strToU8(JSON.stringify(envelope)), { mtime: 0 }));
    const got = await events({
      path: '/i/v0/e/',
      query: 'retry_count=1',
      headers: { 'Content-Type': 'text/plain' },
      body,
    });
    expect(got).toHaveLength(2);
    expect(got[1]).toMatchObject({ timestamp: '2024-06-02T02:09:52.000Z', sentAt: SENT_AT });
  });

  it('base64 mode: data=<encodeURIComponent(base64(JSON))> with compression=base64', async () => {
    const body = `data=${encodeURIComponent(base64(JSON.stringify(jsBatch())))}`;
    expect(
      await events({
        path: '/e/',
        query: `compression=base64&_=${Date.parse(SENT_AT)}`,
        headers: form,
        body,
      }),
    ).toHaveLength(2);
  });

  it('sendBeacon on unload: base64 form, beacon=1 → 204', async () => {
    const body = `data=${encodeURIComponent(base64(JSON.stringify(jsEvent(3))))}`;
    const r = await run({ path: '/e/', query: 'compression=base64&beacon=1', headers: form, body });
    expect(r.status).toBe(204);
    expect(storedEvents(r)).toHaveLength(1);
  });

  it('old lz64 mode: data=<lz-string base64> with compression=lz64', async () => {
    const body = `data=${encodeURIComponent(LZString.compressToBase64(JSON.stringify(jsBatch())))}`;
    expect(
      await events({ path: '/e/', query: 'compression=lz64', headers: form, body }),
    ).toHaveLength(2);
  });

  it('uncompressed JSON', async () => {
    expect(
      await events({
        path: '/e/',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(jsBatch()),
      }),
    ).toHaveLength(2);
  });
});

const nodeMessage = {
  distinct_id: 'user-42',
  event: 'order placed',
  properties: { total: 12.5, $lib: 'posthog-node', $lib_version: '4.18.0', $geoip_disable: true },
  type: 'capture',
  library: 'posthog-node',
  library_version: '4.18.0',
  timestamp: '2024-06-02T02:09:55.000Z',
  uuid: '0190a0b0-0000-7000-8000-0000000000aa',
};

describe('posthog-node', () => {
  it('v4 json mode: /batch/ envelope', async () => {
    const body = JSON.stringify({ api_key: KEY, batch: [nodeMessage], sent_at: SENT_AT });
    const [e] = await events({
      path: '/batch/',
      headers: { 'Content-Type': 'application/json', 'User-Agent': 'posthog-node/4.18.0' },
      body,
    });
    expect(e).toMatchObject({
      event: 'order placed',
      distinctId: 'user-42',
      timestamp: '2024-06-02T02:09:57.000Z',
      uuid: nodeMessage.uuid,
    });
  });

  it('v4 form mode: /e/?ip=1&_=…&v=…, data=<lz-string base64>&compression=lz64 in the form', async () => {
    const payload = JSON.stringify({ api_key: KEY, batch: [nodeMessage], sent_at: SENT_AT });
    const body = `data=${encodeURIComponent(LZString.compressToBase64(payload))}&compression=lz64`;
    const [e] = await events({
      path: '/e/',
      query: `ip=1&_=${Date.parse(SENT_AT)}&v=4.18.0`,
      headers: form,
      body,
    });
    expect(e).toMatchObject({
      distinctId: 'user-42',
      sentAt: SENT_AT,
      properties: { total: 12.5, $geoip_disable: true },
    });
  });

  it('v5: /batch/ gzipped with Content-Encoding: gzip', async () => {
    const body = zlibGzip(
      JSON.stringify({
        api_key: KEY,
        batch: [nodeMessage, { ...nodeMessage, uuid: undefined }],
        sent_at: SENT_AT,
      }),
    );
    const got = await events({
      path: '/batch/',
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      body,
    });
    expect(got).toHaveLength(2);
    expect(got[1]!.uuid).not.toBe(nodeMessage.uuid);
  });
});

describe('other senders', () => {
  it('posthog-python: gzip, camelCase sentAt (not read, so no skew correction), NaN written by json.dumps', async () => {
    const text = `{"batch": [{"event": "e", "distinct_id": "py", "properties": {"ratio": NaN}, "timestamp": "2024-06-02T02:00:00+00:00"}], "api_key": "${KEY}", "sentAt": "2024-06-02T03:00:00+00:00"}`;
    const [e] = await events({
      path: '/batch/',
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      body: zlibGzip(text),
    });
    expect(e).toMatchObject({
      timestamp: '2024-06-02T02:00:00.000Z',
      sentAt: null,
      properties: { ratio: null },
    });
  });

  it('curl -d with the default form content type, api-spec /capture/ shape with a space-separated timestamp', async () => {
    const body = JSON.stringify({
      api_key: KEY,
      event: 'signed up',
      distinct_id: 'u1',
      properties: { plan: 'pro' },
      timestamp: '2024-06-01 10:00:00.123456',
    });
    const [e] = await events({ path: '/capture/', headers: form, body });
    expect(e).toMatchObject({
      event: 'signed up',
      distinctId: 'u1',
      timestamp: '2024-06-01T10:00:00.123Z',
      receivedAt: NOW.toISOString(),
    });
  });

  it('Mixpanel-style GET /track?data=<base64>', async () => {
    const data = base64(
      JSON.stringify({ event: 'clicked', properties: { token: KEY, distinct_id: 'mx' } }),
    );
    expect(
      await events({
        method: 'GET',
        path: '/track/',
        query: `data=${encodeURIComponent(data)}&ip=1`,
      }),
    ).toMatchObject([{ event: 'clicked', distinctId: 'mx' }]);
  });

  it('an unknown but well-formed key → 401 invalid_api_key', async () => {
    const r = await run({
      path: '/batch/',
      body: JSON.stringify({ api_key: 'phc_unknown', batch: [nodeMessage] }),
    });
    expect(r).toMatchObject({ status: 401, failure: { code: 'invalid_api_key', attr: null } });
  });
});
