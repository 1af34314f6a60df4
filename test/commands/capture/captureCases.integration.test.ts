import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { propertiesWithPersonSets } from '../../../commands/capture/model/personPropertiesFromEvent.ts';
import { parseCaptureBatch } from '../../../commands/capture/parseCaptureBatch.ts';
import { decodeCaptureRequest } from '../../../ingress/decodeRequestBody.ts';
import { CAPTURE_CASE_TOKENS, type CaptureCase, captureCases } from '../../support/captureCases.ts';
import { withOurKeyHint } from '../../support/captureKeyHint.ts';
import { captureRequest } from '../../support/captureRequest.ts';
import {
  type CaptureUseCase,
  startCaptureUseCase,
  storedEvents,
} from '../../support/captureUseCase.ts';

/**
 * Every case of test/fixtures/capture_cases.json through the capture use case (captureEvents: decode → parse → key
 * check → normalize → enrich → append), over a test service's Postgres. The status class
 * asserted is `expected_status_here` (this project's answer), falling back to PostHog's `expected_status`. Error bodies
 * are compared only where our status is PostHog's too (otherwise the recorded body is for an answer we do not give);
 * success bodies are the route's to write and are not checked here.
 */
type Case = CaptureCase;
const cases = captureCases;
const KNOWN_TOKENS = CAPTURE_CASE_TOKENS;

/** The receive time of every capture here. */
const NOW = new Date('2024-06-02T02:10:00.000Z');

let useCase: CaptureUseCase;
beforeAll(async () => {
  useCase = await startCaptureUseCase(KNOWN_TOKENS, NOW);
});
afterAll(async () => useCase?.close());

/** Body limits are enforced by the HTTP layer (Fastify bodyLimit → 413) before any of this code runs. */
const HTTP_LAYER: Record<string, string> = {
  django_body_over_upload_limit:
    'body over the 20 MB limit: 413 comes from the route body limit, before decoding',
  rust_non_batch_body_over_2mb:
    'body over the 2 MiB single-event limit: 413 comes from the route body limit, before decoding',
};

function buildBody(c: Case): Buffer | undefined {
  if (c.body_base64 !== undefined) return Buffer.from(c.body_base64, 'base64');
  let body = c.body;
  for (const [placeholder, { char, count }] of Object.entries(c.body_expand ?? {}))
    body = body.replace(placeholder, char.repeat(count));
  // A GET with an empty body has no body at all.
  if (c.method === 'GET' && body === '') return undefined;
  return Buffer.from(body, 'utf8');
}

/**
 * What some of the cases' notes say the stored events must look like. These run before the table below: the table
 * sends the same events again, and the log keeps an event (a uuid, in a project) once, so a case sent a second time
 * stores nothing new.
 */
describe('capture_cases.json, event contents', () => {
  const run = async (name: string) => {
    const c = cases.find((x) => x.name === name)!;
    return storedEvents(
      await useCase.capture(
        captureRequest({
          method: c.method,
          path: c.path,
          query: c.query,
          headers: c.headers,
          body: buildBody(c),
        }),
      ),
    );
  };

  it('engage without a name becomes $identify with the stringified $distinct_id and top-level $set merged', async () => {
    for (const name of ['django_engage_get_becomes_identify', 'rust_engage_without_event_name']) {
      const [e] = await run(name);
      expect(e).toMatchObject({ event: '$identify', distinctId: '3' });
      // the log keeps the client's $set as sent; a reader sees it merged with what it adds
      expect(e!.set).toBe('{"$os":"Mac OS X"}');
      expect(propertiesWithPersonSets(e!)).toMatchObject({ $set: { $os: 'Mac OS X' } });
    }
  });

  it('a distinct id of 250 characters is cut to 200', async () => {
    expect((await run('django_distinct_id_250_chars_truncated'))[0]!.distinctId).toBe(
      'a'.repeat(200),
    );
  });

  it('`_` with ≤ 11 digits is seconds: sent_at 2024-06-02T02:10:00Z', async () => {
    const [e] = await run('django_underscore_query_sent_at_seconds');
    expect(e!.sentAt).toBe('2024-06-02T02:10:00.000Z');
    // NOW is 02:10:00 too, so the skew is zero and the timestamp stays as sent.
    expect(e!.timestamp).toBe('2024-06-02T02:00:00.000Z');
  });

  it('sent_at from the multipart form field', async () => {
    expect((await run('django_sent_at_form_field'))[0]!.sentAt).toBe('2024-06-02T02:10:00.000Z');
  });

  it("base64 with '+' inside multipart decodes to the non-ASCII distinct id", async () => {
    expect((await run('django_base64_with_plus'))[0]!.distinctId).toBe('eeeeeeeg\u03e5eeeee');
  });

  it('lz64 payload with an emoji event name', async () => {
    expect((await run('django_lz64_with_emoji_event_name'))[0]!.event).toBe('\u{1F913}');
  });

  it('posthog-js 1.78 form request: $identify with the client uuid, sent_at from `_` ms', async () => {
    const [e] = await run('rust_django_compat_posthog_js_1_78_form_base64');
    expect(e).toMatchObject({
      event: '$identify',
      uuid: '018a981f-4b35-7c66-825e-8b0eeae65714',
      sentAt: '2023-09-15T09:15:02.325Z',
      ip: '127.0.0.1',
    });
  });

  it('historical migration flag and $elements passed through', async () => {
    const c = cases.find((x) => x.name === 'django_historical_migration_batch_in_form_data')!;
    const req = captureRequest({
      method: c.method,
      path: c.path,
      headers: c.headers,
      body: buildBody(c),
    });
    // The flag is read from the envelope (PostHog routes such batches to its historical topic;
    // here they take the same path, so the log has no trace of it).
    const decoded = decodeCaptureRequest(req);
    if (!decoded.ok) throw new Error(decoded.error.detail);
    const batch = parseCaptureBatch(decoded.payload, {
      path: req.path,
      form: decoded.form,
      query: req.query,
    });
    expect(batch.ok && batch.historicalMigration).toBe(true);
    const r = await useCase.capture(req);
    expect(r.status).toBe(200);
    // $elements are stored as the elements chain, both of them, in order.
    const [e] = storedEvents(r);
    expect(e!.properties.$elements).toBeUndefined();
    expect(e!.elementsChain.split(';').map((el) => el.split(/[.:]/)[0])).toEqual(['a', 'div']);
  });

  it('only $performance_event: accepted, nothing stored', async () => {
    expect(await run('rust_only_performance_events')).toEqual([]);
  });

  it('dropped events do not stop the others in the batch', async () => {
    expect((await run('django_batch_one_event_missing_distinct_id')).map((e) => e.event)).toEqual([
      'event1',
      'event3',
      'event4',
      'event5',
    ]);
  });

  it('batch sent_at skew correction: 11:00:00 sent at 12:00:10, received at NOW', async () => {
    const [e] = await run('rust_batch_with_sent_at_iso');
    // now + (timestamp − sent_at) = 02:10:00 − 1h00m10s
    expect(e!.timestamp).toBe('2024-06-02T01:09:50.000Z');
  });
});

describe('capture_cases.json', () => {
  it('has the cases this table was written against', () => {
    expect(cases.length).toBeGreaterThanOrEqual(40);
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });

  for (const c of cases) {
    const expected = c.expected_status_here ?? c.expected_status;
    const skipReason = HTTP_LAYER[c.name];
    if (skipReason) {
      it.skip(`${c.name} (${skipReason})`, () => {});
      continue;
    }
    it(`${c.name} → ${expected}`, async () => {
      const result = await useCase.capture(
        captureRequest({
          method: c.method,
          path: c.path,
          query: c.query,
          headers: c.headers,
          body: buildBody(c),
        }),
      );
      expect(
        Math.floor(result.status / 100),
        'failure' in result ? result.bodyText : 'accepted',
      ).toBe(Math.floor(expected / 100));
      expect(result.status).toBe(expected);
      if ('failure' in result && expected === c.expected_status) {
        if (c.expected_json)
          expect(JSON.parse(result.bodyText)).toEqual(withOurKeyHint(c.expected_json));
        if (c.expected_body_contains) expect(result.bodyText).toContain(c.expected_body_contains);
      }
    });
  }
});
