import { describe, expect, it } from 'vitest';
import {
  type CaptureBatchContext,
  parseCaptureBatch,
  tokenShapeProblem,
} from '../../../commands/capture/parseCaptureBatch.ts';
import { answerOf } from '../../support/captureRequest.ts';

const ctx = (over: Partial<CaptureBatchContext> = {}): CaptureBatchContext => ({
  path: '/e',
  form: {},
  query: {},
  ...over,
});
const ok = (payload: unknown, c = ctx()) => {
  const r = parseCaptureBatch(payload, c);
  if (!r.ok) throw new Error(`${answerOf(r).status} ${r.error.code}: ${r.error.detail}`);
  return r;
};
const fail = (payload: unknown, c = ctx()) => {
  const r = parseCaptureBatch(payload, c);
  if (r.ok) throw new Error('expected a failure');
  return answerOf(r);
};
const ev = (extra: Record<string, unknown> = {}) => ({ event: 'e', distinct_id: 'd', ...extra });

describe('parseCaptureBatch: payload shapes (capture.md §1.2)', () => {
  it('array of events', () => {
    expect(
      ok([ev({ token: 'k' }), ev({ token: 'k', event: 'f' })]).items.map((i) => i.event),
    ).toEqual(['e', 'f']);
  });

  it('batch envelope, with sent_at and historical_migration', () => {
    const r = ok({
      api_key: 'k',
      batch: [ev(), ev()],
      sent_at: '2024-01-01T00:00:00Z',
      historical_migration: true,
    });
    expect(r).toMatchObject({
      token: 'k',
      sentAt: '2024-01-01T00:00:00Z',
      historicalMigration: true,
    });
    expect(r.items).toHaveLength(2);
  });

  it('single event; a nameless object is kept for the normalizer to name or drop', () => {
    expect(ok(ev({ api_key: 'k' })).items).toEqual([ev({ api_key: 'k' })]);
    expect(ok({ $token: 'k', $distinct_id: 3 }, ctx({ path: '/engage' })).items).toHaveLength(1);
  });

  it('batch: null means a single event; a string batch is Django’s “dictionaries” error', () => {
    expect(ok({ ...ev({ api_key: 'k' }), batch: null }).items).toHaveLength(1);
    expect(fail({ api_key: 'k', batch: '[{}]' }).detail).toBe(
      "Invalid payload: All events must be dictionaries not 'str'!",
    );
    expect(fail({ api_key: 'k', batch: { a: 1 } })).toMatchObject({
      status: 400,
      code: 'invalid_payload',
      attr: null,
    });
  });

  it.each([
    ['a string', '"x"'],
    ['a number', 3],
    ['null', null],
    ['true', true],
  ])('a payload that is %s → 400', (_, payload) => {
    expect(fail(payload, ctx({ query: { token: 'k' } }))).toMatchObject({
      status: 400,
      code: 'invalid_payload',
    });
  });

  it('no events at all → 400', () => {
    expect(fail([]).status).toBe(400);
    expect(fail({ api_key: 'k', batch: [] }).status).toBe(400);
  });

  it('drops $performance_event silently; a request of only those is still fine', () => {
    expect(ok([ev({ token: 'k', event: '$performance_event' })]).items).toEqual([]);
    expect(
      ok([ev({ token: 'k', event: '$performance_event' }), ev({ token: 'k' })]).items,
    ).toHaveLength(1);
  });
});

describe('parseCaptureBatch: the project key (decision 2)', () => {
  it('envelope api_key, then envelope token; the events’ own keys are then ignored', () => {
    expect(ok({ api_key: 'a', token: 'b', batch: [ev({ token: 'c' })] }).token).toBe('a');
    expect(ok({ token: 'b', batch: [ev({ token: 'c' })] }).token).toBe('b');
  });

  it.each([
    ['api_key', { api_key: 'k' }],
    ['token', { token: 'k' }],
    ['$token', { $token: 'k' }],
    ['properties.token', { properties: { token: 'k' } }],
  ])('event %s', (_, extra) => {
    expect(ok(ev(extra)).token).toBe('k');
    expect(ok({ batch: [ev(extra)] }).token).toBe('k');
  });

  it('event api_key before token before $token before properties.token', () => {
    expect(
      ok(ev({ api_key: 'a', token: 'b', $token: 'c', properties: { token: 'd' } })).token,
    ).toBe('a');
    expect(ok(ev({ token: 'b', $token: 'c', properties: { token: 'd' } })).token).toBe('b');
    expect(ok(ev({ $token: 'c', properties: { token: 'd' } })).token).toBe('c');
  });

  it('a non-string properties.token is a user property, not a key', () => {
    expect(fail(ev({ properties: { token: 5 } })).code).toBe('missing_api_key');
  });

  it('form api_key, form token, query token, query api_key — after the payload, empty values skipped', () => {
    expect(
      ok(ev(), ctx({ form: { api_key: 'f1', token: 'f2' }, query: { token: 'q1' } })).token,
    ).toBe('f1');
    expect(
      ok(ev(), ctx({ form: { api_key: '', token: 'f2' }, query: { token: 'q1' } })).token,
    ).toBe('f2');
    expect(ok(ev(), ctx({ query: { token: 'q1', api_key: 'q2' } })).token).toBe('q1');
    expect(ok(ev(), ctx({ query: { api_key: 'q2' } })).token).toBe('q2');
    expect(ok(ev({ token: 'p' }), ctx({ form: { api_key: 'f1' } })).token).toBe('p');
  });

  it('events of one request carrying different keys → 400 invalid_payload; events without a key inherit', () => {
    expect(fail([ev({ token: 'a' }), ev({ token: 'b' })])).toMatchObject({
      status: 400,
      code: 'invalid_payload',
      attr: null,
    });
    expect(ok([ev({ token: 'a' }), ev(), ev({ properties: { token: 'a' } })]).items).toHaveLength(
      3,
    );
    expect(ok([ev({ token: ' a ' }), ev({ token: 'a' })]).token).toBe('a');
  });

  it('no key anywhere → 401 missing_api_key, before any other check', () => {
    expect(fail([ev(), null])).toEqual({
      ok: false,
      status: 401,
      type: 'authentication_error',
      code: 'missing_api_key',
      detail:
        'API key not provided. The first start of hogstream printed your project API key (phc_…); `npm run cli -- project create --name <name>` makes another.',
      attr: null,
    });
    expect(fail({}).status).toBe(401);
  });

  it.each([
    ['empty', ''],
    ['empty', '   '],
    ['not_string', 42],
    ['not_string', { k: 1 }],
    ['too_long', 'k'.repeat(65)],
    ['not_ascii', 'tökén'],
    ['null_byte', 'ab\0c'],
  ])('a key of the wrong shape → 401 %s', (reason, key) => {
    expect(fail({ api_key: key, batch: [ev()] })).toMatchObject({
      status: 401,
      type: 'authentication_error',
      code: reason,
      detail: `Provided API key is not valid: ${reason}`,
      attr: null,
    });
  });

  it('64 ASCII characters are fine; surrounding whitespace is trimmed', () => {
    expect(tokenShapeProblem('k'.repeat(64))).toBeUndefined();
    expect(ok(ev({ api_key: '  phc_abc \n' })).token).toBe('phc_abc');
  });

  it('personal keys are returned with project_id for the route to authenticate', () => {
    expect(ok({ api_key: 'phx_secret', project_id: 7, batch: [ev()] })).toMatchObject({
      token: 'phx_secret',
      projectIdField: 7,
    });
    expect(
      ok(ev({ api_key: 'phx_secret' }), ctx({ form: { project_id: '8' } })).projectIdField,
    ).toBe('8');
    expect(
      ok(ev({ api_key: 'phx_secret' }), ctx({ query: { project_id: '9' } })).projectIdField,
    ).toBe('9');
    expect(ok(ev({ api_key: 'phx_secret' })).projectIdField).toBeUndefined();
  });
});

describe('parseCaptureBatch: malformed events (decision 4)', () => {
  const K = { api_key: 'k' };

  it('null item → Django’s “some events are null”', () => {
    expect(fail({ ...K, batch: [ev(), null] }).detail).toBe(
      'Invalid payload: some events are null',
    );
  });

  it.each([
    ['str', 'x'],
    ['int', 1],
    ['float', 1.5],
    ['bool', true],
    ['list', [ev()]],
  ])('non-object item (%s) → 400', (type, item) => {
    expect(fail({ ...K, batch: [ev(), item] }).detail).toBe(
      `Invalid payload: All events must be dictionaries not '${type}'!`,
    );
  });

  it.each([
    ['list', []],
    ['str', 'x'],
    ['NoneType', null],
  ])('properties that are not an object (%s) → 400', (type, properties) => {
    expect(fail({ ...K, batch: [ev({ properties })] }).detail).toBe(
      `Invalid payload: Properties must be a JSON object, received ${type}!`,
    );
  });

  it('uuid: must read as a UUID; "" and null count as absent', () => {
    for (const uuid of ['nope', '0190a0b0-0000-7000-8000-00000000003', 12, true]) {
      expect(fail({ ...K, batch: [ev({ uuid })] }).detail).toBe(
        'Invalid payload: Event field "uuid" is not a valid UUID!',
      );
    }
    for (const uuid of [
      '',
      null,
      '0190A0B0-0000-7000-8000-000000000037',
      '{0190a0b0-0000-7000-8000-000000000037}',
      '0190a0b000007000800000000000003f',
    ]) {
      expect(ok({ ...K, batch: [ev({ uuid })] }).items).toHaveLength(1);
    }
  });

  it('offset: numbers only', () => {
    expect(fail({ ...K, batch: [ev({ offset: '100' })] }).detail).toBe(
      'Invalid payload: Event field "offset" must be numeric, received str!',
    );
    expect(ok({ ...K, batch: [ev({ offset: 100 }), ev({ offset: null })] }).items).toHaveLength(2);
  });

  it('offset inside properties: numbers only too (Django, capture.md §2.1)', () => {
    expect(fail({ ...K, batch: [ev({ properties: { offset: 'soon' } })] }).detail).toBe(
      'Invalid payload: Event field "offset" must be numeric, received str!',
    );
    expect(ok({ ...K, batch: [ev({ properties: { offset: 5 } })] }).items).toHaveLength(1);
  });

  it('one bad event rejects the whole request', () => {
    expect(fail({ ...K, batch: [ev(), ev(), ev({ uuid: 'x' })] }).status).toBe(400);
  });
});

describe('parseCaptureBatch: sent_at', () => {
  it('body first, then form, then query `_`, then query sent_at', () => {
    const q = { _: '1717294200', sent_at: '1717294300000' };
    expect(
      ok(
        { api_key: 'k', sent_at: '2024-01-01T00:00:00Z', batch: [ev()] },
        ctx({ form: { sent_at: 'f' }, query: q }),
      ).sentAt,
    ).toBe('2024-01-01T00:00:00Z');
    expect(ok(ev({ api_key: 'k', sent_at: '2024-01-02T00:00:00Z' })).sentAt).toBe(
      '2024-01-02T00:00:00Z',
    );
    expect(
      ok([ev({ token: 'k' })], ctx({ form: { sent_at: '2024-06-02T02:10:00+00:00' }, query: q }))
        .sentAt,
    ).toBe('2024-06-02T02:10:00+00:00');
    expect(ok([ev({ token: 'k' })], ctx({ query: q })).sentAt).toBe('2024-06-02T02:10:00.000Z');
    expect(ok([ev({ token: 'k' })], ctx({ query: { sent_at: '1717294300000' } })).sentAt).toBe(
      '2024-06-02T02:11:40.000Z',
    );
  });

  it('`_` in milliseconds (13 digits) and numeric body values', () => {
    expect(ok([ev({ token: 'k' })], ctx({ query: { _: '1694769302325' } })).sentAt).toBe(
      '2023-09-15T09:15:02.325Z',
    );
    expect(ok({ api_key: 'k', sent_at: 1694769302325, batch: [ev()] }).sentAt).toBe(
      '2023-09-15T09:15:02.325Z',
    );
  });

  it('absent → undefined; unparseable strings are passed on for the normalizer to warn about', () => {
    expect(ok([ev({ token: 'k' })]).sentAt).toBeUndefined();
    expect(ok({ api_key: 'k', sent_at: 'yesterday', batch: [ev()] }).sentAt).toBe('yesterday');
    // posthog-python's camelCase sentAt is not read, as in PostHog (capture.md §1.6).
    expect(
      ok({ api_key: 'k', sentAt: '2024-01-01T00:00:00Z', batch: [ev()] }).sentAt,
    ).toBeUndefined();
  });
});
