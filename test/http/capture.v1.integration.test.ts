import { randomUUID } from 'node:crypto';
import { deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBackEvents } from '../support/captureReadback.ts';
import { startTestService, type TestService } from '../support/testService.ts';

/**
 * Capture v1 (`POST /i/v1/analytics/events`, posthog-python's `capture_mode="v1"`) over real
 * HTTP: the answer per event uuid, the refusals in the API's error shape, the encodings, and the
 * events as the events list shows them (the same capture use case as `/batch/`).
 */
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

const PATH = '/i/v1/analytics/events';
const event = (distinctId: string, extra: Record<string, unknown> = {}) => ({
  event: 'signed up',
  uuid: randomUUID(),
  distinct_id: distinctId,
  timestamp: '2026-03-19T14:29:58.123Z',
  options: {},
  properties: { plan: 'pro' },
  ...extra,
});
const batch = (...events: unknown[]) => ({ created_at: '2026-03-19T14:30:00Z', batch: events });

async function post(
  body: unknown,
  headers: Record<string, string> = {},
  encode: (b: Buffer) => Buffer = (b) => b,
) {
  const res = await fetch(`${t.url}${PATH}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${t.projectApiKey}`,
      'posthog-sdk-info': 'posthog-python/7.53.0',
      'posthog-request-timestamp': '2026-03-19T14:30:00Z',
      ...headers,
    },
    body: new Uint8Array(
      encode(Buffer.from(typeof body === 'string' ? body : JSON.stringify(body))),
    ),
  });
  return { status: res.status, body: await res.json() };
}

describe('capture v1', () => {
  it('answers ok per uuid and stores the event with $lib from PostHog-Sdk-Info and the options as properties', async () => {
    const id = `v1-${randomUUID()}`;
    const e = event(id, {
      session_id: 'sess-1',
      options: { process_person_profile: 'true', disable_skew_correction: true },
    });
    const res = await post(batch(e));
    expect(res).toEqual({ status: 200, body: { results: { [e.uuid]: { result: 'ok' } } } });
    const [stored] = await readBackEvents(t, id);
    expect(stored).toMatchObject({
      uuid: e.uuid,
      event: 'signed up',
      timestamp: '2026-03-19T14:29:58.123Z',
      properties: {
        plan: 'pro',
        $lib: 'posthog-python',
        $lib_version: '7.53.0',
        $session_id: 'sess-1',
        $process_person_profile: true,
        $ignore_sent_at: true,
      },
    });
  });

  it.each([
    ['gzip', gzipSync],
    ['deflate', deflateSync],
  ] as const)('reads a %s body', async (encoding, encode) => {
    const e = event(`v1-${randomUUID()}`);
    const res = await post(batch(e), { 'content-encoding': encoding }, (b) => encode(b));
    expect(res.body.results[e.uuid]).toEqual({ result: 'ok' });
  });

  it('drops only the event it cannot take, and says why', async () => {
    const good = event(`v1-${randomUUID()}`);
    const noId = event('   ');
    const badOption = event(`v1-${randomUUID()}`, { options: { cookieless_mode: 'perhaps' } });
    const res = await post(batch(good, noId, badOption));
    expect(res).toEqual({
      status: 200,
      body: {
        results: {
          [good.uuid]: { result: 'ok' },
          [noId.uuid]: { result: 'drop', details: 'skipping_event_invalid_distinct_id' },
          [badOption.uuid]: { result: 'drop', details: 'invalid_options' },
        },
      },
    });
  });

  it.each([
    ['no Authorization', { authorization: '' }, batch(event('x')), 401, 'missing_api_key'],
    [
      'an unknown key',
      { authorization: 'Bearer phc_nobody' },
      batch(event('x')),
      401,
      'invalid_api_key',
    ],
    ['an empty batch', {}, batch(), 400, 'invalid_payload'],
    ['no created_at', {}, { batch: [event('x')] }, 400, 'invalid_payload'],
    [
      'an event without uuid',
      {},
      batch({ ...event('x'), uuid: undefined }),
      400,
      'invalid_payload',
    ],
    ['a bad uuid', {}, batch(event('x', { uuid: 'nope' })), 400, 'invalid_payload'],
    ['text that is not JSON', {}, '{"batch": [', 400, 'invalid_payload'],
    ['zstd', { 'content-encoding': 'zstd' }, batch(event('x')), 400, 'unsupported_encoding'],
  ])('refuses %s in the API error shape', async (_name, headers, body, status, code) => {
    const res = await post(body, headers);
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ code, detail: expect.any(String), attr: null });
  });
});
