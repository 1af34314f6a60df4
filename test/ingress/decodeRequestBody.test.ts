import { gzipSync } from 'node:zlib';
import LZString from 'lz-string';
import { describe, expect, it } from 'vitest';
import { decodeCaptureRequest, parseJson } from '../../ingress/decodeRequestBody.ts';
import { answerOf, captureRequest } from '../support/captureRequest.ts';

const EVENT = {
  event: '$pageview',
  distinct_id: 'user 1+2',
  properties: { token: 'token123', emoji: '\u{1F913}' },
};
const JSON_TEXT = JSON.stringify(EVENT);
const B64 = Buffer.from(JSON_TEXT, 'utf8').toString('base64');

const decode = (opts: Parameters<typeof captureRequest>[0], max?: number) =>
  decodeCaptureRequest(captureRequest(opts), max === undefined ? {} : { maxDecodedBytes: max });
const payloadOf = (opts: Parameters<typeof captureRequest>[0]) => {
  const r = decode(opts);
  if (!r.ok) throw new Error(`${answerOf(r).status} ${r.error.detail}`);
  return r.payload;
};
const failureOf = (opts: Parameters<typeof captureRequest>[0], max?: number) => {
  const r = decode(opts, max);
  if (r.ok) throw new Error('expected a failure');
  return answerOf(r);
};

function multipart(fields: Record<string, string | Buffer>, boundary = 'XyZ') {
  const parts = Object.entries(fields).map(([name, value]) =>
    Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n`),
      Buffer.from(value),
      Buffer.from('\r\n'),
    ]),
  );
  return {
    body: Buffer.concat([...parts, Buffer.from(`--${boundary}--\r\n`)]),
    headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` },
  };
}

describe('decodeCaptureRequest: plain JSON bodies', () => {
  it.each([
    undefined,
    'application/json',
    'application/json; charset=utf-8',
    'text/plain',
    'application/octet-stream',
  ])('content type %s', (ct) => {
    expect(
      payloadOf({ path: '/e', headers: ct ? { 'Content-Type': ct } : {}, body: JSON_TEXT }),
    ).toEqual(EVENT);
  });

  it('keeps arrays and envelopes as they are', () => {
    expect(payloadOf({ path: '/batch', body: '[{"event":"a"}]' })).toEqual([{ event: 'a' }]);
  });

  it('reads bare NaN / Infinity (Python json.dumps) as null, but not inside strings', () => {
    expect(
      payloadOf({
        path: '/batch',
        body: '{"a": NaN, "b": -Infinity, "c": "NaN Infinity", "d": [Infinity]}',
      }),
    ).toEqual({
      a: null,
      b: null,
      c: 'NaN Infinity',
      d: [null],
    });
    expect(parseJson('{"a": NaNx}').ok).toBe(false);
  });

  it('NUL in keys and strings becomes U+FFFD (Postgres cannot store it); an escaped backslash-u0000 stays text', () => {
    expect(
      payloadOf({
        path: '/e',
        body: '{"event":"a\\u0000b","properties":{"k\\u0000":["\\u0000"],"lit":"\\\\u0000"}}',
      }),
    ).toEqual({
      event: 'a\uFFFDb',
      properties: { 'k\uFFFD': ['\uFFFD'], lit: '\\u0000' },
    });
  });

  it('no body, an empty body or only whitespace → 400 no_data', () => {
    expect(failureOf({ path: '/e' })).toMatchObject({ status: 400, code: 'no_data' });
    expect(failureOf({ path: '/e', body: '' })).toMatchObject({ status: 400, code: 'no_data' });
    expect(failureOf({ path: '/e', body: '  \n' })).toMatchObject({ status: 400, code: 'no_data' });
  });

  it('a CSP report is not an event payload → no_data', () => {
    expect(
      failureOf({
        path: '/e',
        headers: { 'content-type': 'application/csp-report' },
        body: '{"csp-report":{}}',
      }).code,
    ).toBe('no_data');
  });

  it('malformed JSON → 400 invalid_payload with attr null', () => {
    expect(failureOf({ path: '/e', body: '{"event": ' })).toMatchObject({
      status: 400,
      type: 'validation_error',
      code: 'invalid_payload',
      attr: null,
    });
  });

  it('bytes that are not UTF-8 → 400 invalid_payload', () => {
    expect(failureOf({ path: '/e', body: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]) }).code).toBe(
      'invalid_payload',
    );
  });
});

describe('decodeCaptureRequest: base64', () => {
  it('a whole body of base64 JSON, on legacy and new paths alike', () => {
    expect(payloadOf({ path: '/e', body: B64 })).toEqual(EVENT);
    expect(payloadOf({ path: '/i/v0/e', body: B64 })).toEqual(EVENT);
  });

  it('without padding, URL-safe alphabet, or with a stray `data=` prefix', () => {
    expect(payloadOf({ path: '/e', body: B64.replace(/=+$/, '') })).toEqual(EVENT);
    expect(payloadOf({ path: '/e', body: Buffer.from(JSON_TEXT).toString('base64url') })).toEqual(
      EVENT,
    );
    expect(
      payloadOf({
        path: '/capture',
        body: `data=${encodeURIComponent(B64)}`,
        headers: { 'content-type': 'text/plain' },
      }),
    ).toEqual(EVENT);
  });

  it('base64 that does not hold JSON → 400', () => {
    expect(failureOf({ path: '/e', body: Buffer.from('not json').toString('base64') }).code).toBe(
      'invalid_payload',
    );
  });
});

describe('decodeCaptureRequest: forms', () => {
  const form = { 'Content-Type': 'application/x-www-form-urlencoded' };

  it('urlencoded data= holding JSON, other fields returned in form', () => {
    const r = decode({
      path: '/e',
      headers: form,
      body: `data=${encodeURIComponent(JSON_TEXT)}&api_key=token123&ver=1.0`,
    });
    expect(r).toEqual({
      ok: true,
      payload: EVENT,
      form: { api_key: 'token123', ver: '1.0' },
      textLength: JSON.stringify(EVENT).length,
    });
  });

  it("urlencoded base64 whose '+' arrived unescaped (turned into spaces by form decoding)", () => {
    const withPlus = Buffer.from(
      '{"event":"$pageview","properties":{"distinct_id":"eeeeeeeg\u03e5eeeee"}}',
    ).toString('base64');
    expect(withPlus).toContain('+');
    expect(payloadOf({ path: '/e', headers: form, body: `data=${withPlus}` })).toMatchObject({
      properties: { distinct_id: 'eeeeeeeg\u03e5eeeee' },
    });
  });

  it('`curl -d` JSON sent with the form content type is read as the body', () => {
    expect(decode({ path: '/capture', headers: form, body: JSON_TEXT })).toEqual({
      ok: true,
      payload: EVENT,
      form: {},
      textLength: JSON_TEXT.length,
    });
  });

  it('a form without data → no_data', () => {
    expect(failureOf({ path: '/e', headers: form, body: 'api_key=token123' }).code).toBe('no_data');
  });

  it('a field called __proto__ stays an ordinary field', () => {
    const r = decode({
      path: '/e',
      headers: form,
      body: `data=${encodeURIComponent(JSON_TEXT)}&__proto__=x`,
    });
    expect(r.ok && Object.getPrototypeOf(r.form)).toBe(Object.prototype);
    expect(r.ok && Object.hasOwn(r.form, '__proto__')).toBe(true);
  });

  it('multipart data= and other fields', () => {
    const m = multipart({ data: JSON_TEXT, api_key: 'token123', sent_at: '2024-06-02T02:10:00Z' });
    expect(decode({ path: '/track', ...m })).toEqual({
      ok: true,
      payload: EVENT,
      form: { api_key: 'token123', sent_at: '2024-06-02T02:10:00Z' },
      textLength: expect.any(Number),
    });
  });

  it('multipart data= holding gzip bytes', () => {
    const m = multipart({ data: gzipSync(JSON_TEXT), compression: 'gzip' });
    expect(payloadOf({ path: '/e', ...m })).toEqual(EVENT);
  });

  it('multipart without a boundary, or with a broken body → 400 invalid_payload', () => {
    expect(
      failureOf({ path: '/e', headers: { 'content-type': 'multipart/form-data' }, body: 'x' }).code,
    ).toBe('invalid_payload');
    expect(
      failureOf({
        path: '/e',
        headers: { 'content-type': 'multipart/form-data; boundary=b' },
        body: 'garbage',
      }).code,
    ).toBe('invalid_payload');
  });

  it('GET ?data= (plain or base64) and its precedence over the body', () => {
    expect(
      payloadOf({ method: 'GET', path: '/e', query: `data=${encodeURIComponent(JSON_TEXT)}` }),
    ).toEqual(EVENT);
    expect(
      payloadOf({ method: 'GET', path: '/track', query: `data=${encodeURIComponent(B64)}` }),
    ).toEqual(EVENT);
    expect(
      payloadOf({
        path: '/e',
        query: `data=${encodeURIComponent(JSON_TEXT)}`,
        body: '{"other":1}',
      }),
    ).toEqual(EVENT);
  });
});

describe('decodeCaptureRequest: gzip', () => {
  const gz = gzipSync(JSON_TEXT);

  it.each([
    ['query compression=gzip-js', { query: 'compression=gzip-js' }],
    ['query compression=gzip', { query: 'compression=gzip' }],
    [
      'Content-Encoding: gzip',
      { headers: { 'Content-Encoding': 'gzip', 'Content-Type': 'application/json' } },
    ],
    ['no hint (magic bytes)', {}],
  ])('%s', (_, extra) => {
    expect(payloadOf({ path: '/e', body: gz, ...extra })).toEqual(EVENT);
  });

  it('form compression=gzip on a base64 data field', () => {
    const body = `data=${encodeURIComponent(gz.toString('base64'))}&compression=gzip`;
    expect(
      payloadOf({
        path: '/e',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      }),
    ).toEqual(EVENT);
  });

  it('gzip of base64 JSON is unwrapped on legacy paths only', () => {
    const wrapped = gzipSync(B64);
    expect(payloadOf({ path: '/e', body: wrapped })).toEqual(EVENT);
    expect(payloadOf({ path: '/batch/', body: wrapped })).toEqual(EVENT);
    expect(failureOf({ path: '/i/v0/e', body: wrapped }).code).toBe('invalid_payload');
  });

  it('broken gzip → 400; a gzip hint on a plain JSON body is forgiven; on garbage it is a decompression error', () => {
    expect(failureOf({ path: '/e', body: gz.subarray(0, 12) }).detail).toMatch(
      /^Malformed request data: Failed to decompress data\./,
    );
    expect(payloadOf({ path: '/e', query: 'compression=gzip-js', body: JSON_TEXT })).toEqual(EVENT);
    expect(failureOf({ path: '/e', query: 'compression=gzip-js', body: 'garbage' }).detail).toBe(
      'Malformed request data: Failed to decompress data. Not a gzipped file',
    );
  });

  it('a zip bomb is cut off at maxDecodedBytes → 413', () => {
    const bomb = gzipSync(Buffer.alloc(5_000_000, 0x20));
    expect(bomb.length).toBeLessThan(10_000);
    expect(failureOf({ path: '/e', body: bomb }, 1_000_000)).toMatchObject({
      status: 413,
      code: 'payload_too_large',
    });
  });
});

describe('decodeCaptureRequest: lz-string', () => {
  const lz = LZString.compressToBase64(JSON_TEXT);

  it.each([
    ['query compression=lz64', { query: 'compression=lz64', body: lz }],
    ['query compression=lz-string', { query: 'compression=lz-string', body: lz }],
    ['Content-Encoding: lz64', { headers: { 'content-encoding': 'lz64' }, body: lz }],
    [
      'form data= + compression=lz64 (posthog-node v4 form mode)',
      {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `data=${encodeURIComponent(lz)}&compression=lz64`,
      },
    ],
    ["'+' turned into spaces", { query: 'compression=lz64', body: lz.replace(/\+/g, ' ') }],
  ])('%s', (_, extra) => {
    expect(payloadOf({ path: '/e', ...extra })).toEqual(EVENT);
  });

  it('lz64 of base64 JSON is unwrapped on legacy paths only', () => {
    const wrapped = LZString.compressToBase64(B64);
    expect(payloadOf({ path: '/e', query: 'compression=lz64', body: wrapped })).toEqual(EVENT);
    expect(failureOf({ path: '/i/v0/e', query: 'compression=lz64', body: wrapped }).code).toBe(
      'invalid_payload',
    );
  });

  it('data that is not lz-string → Django’s exact 400', () => {
    expect(failureOf({ path: '/track', query: 'compression=lz64', body: 'foo' })).toEqual({
      ok: false,
      status: 400,
      type: 'validation_error',
      code: 'invalid_payload',
      detail: 'Malformed request data: Failed to decompress data.',
      attr: null,
    });
  });

  it('the query hint wins over the form and the header', () => {
    const body = `data=${encodeURIComponent(lz)}&compression=gzip`;
    expect(
      payloadOf({
        path: '/e',
        query: 'compression=lz64',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'content-encoding': 'gzip',
        },
        body,
      }),
    ).toEqual(EVENT);
  });
});
