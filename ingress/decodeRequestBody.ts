import { promisify } from 'node:util';
import { gunzip, gunzipSync } from 'node:zlib';
import { getMultipartBoundary, parseMultipart } from '@remix-run/multipart-parser';
import { jsonDepth } from '../src/core/json.ts';
import { escapesUnstorable, mayHoldUnstorable, storableValue } from '../src/core/storable.ts';
import { type CaptureFailure, invalidPayload, noData, payloadTooLarge } from './ingressErrors.ts';
import { decompressLz64 } from './lz64.ts';
import { PIECES_FROM_BYTES, parseJsonInPieces } from './parseJsonInPieces.ts';
import type { RawCaptureRequest } from './requestContext.ts';

/**
 * Turns the bytes of a capture request into the JSON the client meant, whatever the client's transport
 * (capture.md §1.4, §5): `?data=`, urlencoded or multipart `data=`, or the raw body; base64, gzip (hinted or sniffed)
 * or lz-string. Pure: no I/O, nothing about tokens or event shapes (see parseCaptureBatch).
 */
export type DecodedCaptureRequest = {
  ok: true;
  payload: unknown;
  /** the other form fields of an urlencoded or multipart body (api_key, token, compression, sent_at, …) */
  form: Record<string, string>;
  /** length of the decoded JSON text: no event can be larger */
  textLength: number;
};

export type DecodeOptions = {
  /** cap on what gzip / lz-string may expand to (a zip bomb is small on the wire); over it → 413 */
  maxDecodedBytes?: number;
  /**
   * The request body already gunzipped off the event loop (`inflateBody`): used instead of
   * inflating it here when the body is what gets decoded.
   */
  inflatedBody?: Buffer;
};

/**
 * Gunzips a gzip request body on libuv's thread pool, so a large or hostile body does not hold the
 * event loop; `decodeCaptureRequest` then takes the result (`inflatedBody`). Undefined when the body
 * is not gzip or does not inflate (the decoder then answers as it would); 'too_large' past the cap.
 */
const gunzipAsync = promisify(gunzip);

export async function inflateBody(
  body: Buffer | undefined,
  max = DEFAULT_MAX_DECODED_BYTES,
): Promise<Buffer | 'too_large' | undefined> {
  if (!body || !isGzip(body)) return undefined;
  try {
    return await gunzipAsync(body, inflateOptions(body, max));
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' ? 'too_large' : undefined;
  }
}

/** Above the largest body we take (20 MB on /batch), so that only compressed payloads can reach it. */
export const DEFAULT_MAX_DECODED_BYTES = 32 * 1024 * 1024;

/**
 * zlib's options for a body: the cap, and output chunks sized to the input. zlib's default 16 KiB
 * chunks cost a round trip each (a thread-pool job, a JS callback, a Buffer): a 100 KB gzip bomb
 * took 75–300 ms to reach the 32 MiB cap, 12–30 ms with 400 KiB chunks. Small bodies keep
 * small chunks (JSON inflates 5–10×), so an everyday request allocates no more than before.
 */
export const inflateOptions = (compressed: Buffer, max: number) => ({
  maxOutputLength: max,
  chunkSize: Math.min(1024 * 1024, Math.max(16 * 1024, compressed.length * 4)),
});

/** Browser CSP reports belong to /report; Django answers them here with no_data (capture_cases.json). */
const CSP_REPORT_TYPES = new Set(['application/csp-report', 'application/reports+json']);
const FORM = 'application/x-www-form-urlencoded';
const MULTIPART = 'multipart/form-data';

type Hint = 'gzip' | 'lz64' | 'base64' | 'none';

export function decodeCaptureRequest(
  req: RawCaptureRequest,
  opts: DecodeOptions = {},
): DecodedCaptureRequest | CaptureFailure {
  const max = opts.maxDecodedBytes ?? DEFAULT_MAX_DECODED_BYTES;
  const rawContentType = req.headers['content-type'] ?? '';
  const contentType = rawContentType.split(';')[0]!.trim().toLowerCase();

  let form: Record<string, string> = {};
  let source: Buffer | string | undefined;
  if (contentType === FORM || contentType === MULTIPART) {
    const parsed =
      contentType === FORM ? readUrlencoded(req.body) : readMultipart(req.body, rawContentType);
    if (!parsed.ok) return parsed;
    form = parsed.fields;
    source = parsed.data;
    // `curl -d '{"api_key": …}'` sends JSON labelled as a form: take the body when it has no `data` field.
    if (source === undefined && contentType === FORM && looksLikeJson(req.body)) {
      form = {};
      source = req.body;
    }
  } else if (!CSP_REPORT_TYPES.has(contentType)) {
    source = req.body;
  }
  // GET `?data=` (and the odd POST that uses it) comes before the body, as in capture.md §5.
  if (nonEmpty(req.query.data) !== undefined) source = req.query.data;
  if (source === undefined || source.length === 0) return noData();

  const hint = compressionHint(
    nonEmpty(req.query.compression) ??
      nonEmpty(form.compression) ??
      req.headers['content-encoding'],
  );
  const legacy = normalisePath(req.path) !== '/i/v0/e';
  let bytes = typeof source === 'string' ? Buffer.from(source, 'utf8') : source;
  let decompressed = false;
  let text: string;

  if (hint === 'lz64') {
    // Form transport turns '+' into ' '; lz-string's base64 alphabet needs them back (Django does the same).
    const out = decompressLz64(bytes.toString('utf8').trim().replace(/ /g, '+'), max);
    if (!out.ok && out.reason === 'too_large') return payloadTooLarge(max);
    if (!out.ok) return invalidPayload('Malformed request data: Failed to decompress data.');
    text = out.text;
    decompressed = true;
  } else {
    // A gzip hint on a text field can only mean base64-wrapped gzip.
    if (hint === 'gzip' && typeof source === 'string' && !isGzip(bytes)) {
      const unwrapped = base64Bytes(source);
      if (unwrapped && isGzip(unwrapped)) bytes = unwrapped;
    }
    // Sniffing the magic bytes is required: posthog-js ≥ 1.398.2 gzips without any hint.
    if (isGzip(bytes) && opts.inflatedBody && bytes === req.body) {
      bytes = opts.inflatedBody;
      decompressed = true;
    } else if (isGzip(bytes)) {
      try {
        bytes = gunzipSync(bytes, inflateOptions(bytes, max));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
          return payloadTooLarge(max);
        return invalidPayload(
          `Malformed request data: Failed to decompress data. failed to decode request: ${(e as Error).message}`,
        );
      }
      decompressed = true;
    }
    if (bytes.length >= PIECES_FROM_BYTES) {
      const pieces = parseJsonInPieces(bytes, MAX_JSON_DEPTH);
      if (pieces?.kind === 'too_deep') return tooDeep();
      // the same payload the whole text gives (acceptJson), never decoded as one large string
      if (pieces)
        return {
          ok: true,
          payload: pieces.escaped ? storableValue(pieces.value) : pieces.value,
          form,
          textLength: bytes.length,
        };
    }
    const decoded = utf8(bytes);
    if (decoded === undefined)
      return invalidPayload(
        'Malformed request data: failed to decode request: the payload is not valid UTF-8',
      );
    text = decoded;
  }

  if (text.trim() === '') return noData();
  // Measured on the text, before parsing: a million-deep array would cost the parser half a second.
  if (jsonDepth(text) > MAX_JSON_DEPTH) return tooDeep();
  const parsed = parseJson(text);
  if (parsed.ok) return acceptJson(parsed.value, text, form, hint === 'lz64');
  // Base64-wrapped JSON: always tried on raw input, and after decompression only on the legacy paths (capture.md §1.1).
  if (!decompressed || legacy) {
    const inner = unwrapBase64(text);
    if (inner !== undefined) {
      if (jsonDepth(inner) > MAX_JSON_DEPTH) return tooDeep();
      const unwrapped = parseJson(inner);
      if (unwrapped.ok) return acceptJson(unwrapped.value, inner, form, false);
    }
  }
  if (hint === 'gzip' && !decompressed)
    return invalidPayload('Malformed request data: Failed to decompress data. Not a gzipped file');
  return invalidPayload(
    `Malformed request data: failed to parse request: Invalid JSON: ${parsed.error}`,
  );
}

export const normalisePath = (path: string) => path.replace(/\/+$/, '') || '/';

const nonEmpty = (s: string | undefined) => (s === undefined || s === '' ? undefined : s);

function compressionHint(value: string | undefined): Hint {
  switch (value?.trim().toLowerCase()) {
    case 'gzip':
    case 'gzip-js':
      return 'gzip';
    case 'lz64':
    case 'lz-string':
      return 'lz64';
    case 'base64':
    case 'b64':
      return 'base64';
    default:
      return 'none'; // unknown or absent: sniff
  }
}

type FormRead =
  | { ok: true; fields: Record<string, string>; data: Buffer | string | undefined }
  | CaptureFailure;

function readUrlencoded(body: Buffer | undefined): FormRead {
  const fields = new Map<string, string>();
  let data: string | undefined;
  for (const [name, value] of new URLSearchParams(body?.toString('utf8') ?? '')) {
    if (name === 'data') data ??= value;
    else if (!fields.has(name)) fields.set(name, value);
  }
  // Object.fromEntries defines own properties, so a field named __proto__ cannot reach the prototype.
  return { ok: true, fields: Object.fromEntries(fields), data };
}

function readMultipart(body: Buffer | undefined, contentType: string): FormRead {
  const boundary = getMultipartBoundary(contentType);
  if (!boundary) return invalidPayload('Malformed request data: multipart body without a boundary');
  const fields = new Map<string, string>();
  let data: Buffer | undefined;
  if (!body || body.length === 0) return { ok: true, fields: {}, data };
  try {
    // The size limits are the route's job (413 before we get here); the library's own defaults (2 MiB) must not bite.
    const limit = body.length + 1;
    for (const part of parseMultipart(body, {
      boundary,
      maxFileSize: limit,
      maxTotalSize: limit,
    })) {
      const name = part.name;
      if (name === undefined) continue;
      // `data` stays bytes: a client may put gzip in it.
      if (name === 'data') data ??= Buffer.from(part.bytes);
      else if (!fields.has(name)) fields.set(name, part.text);
    }
  } catch (e) {
    return invalidPayload(
      `Malformed request data: failed to decode request: ${(e as Error).message}`,
    );
  }
  return { ok: true, fields: Object.fromEntries(fields), data };
}

function looksLikeJson(body: Buffer | undefined) {
  const first = body?.toString('utf8', 0, 64).trimStart()[0];
  return first === '{' || first === '[';
}

const isGzip = (b: Buffer) => b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;

const utf8Decoder = new TextDecoder('utf-8', { fatal: true });
function utf8(bytes: Uint8Array): string | undefined {
  try {
    return utf8Decoder.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * Django's lenient base64: strip a leading `data=`, URL-unquote, spaces back to '+', padding optional; the URL-safe
 * alphabet is accepted too.
 */
function base64Bytes(text: string): Buffer | undefined {
  let s = text.trim();
  if (s.startsWith('data=')) s = s.slice(5);
  if (s.includes('%')) {
    try {
      s = decodeURIComponent(s);
    } catch {
      return undefined;
    }
  }
  s = s.replace(/ /g, '+').replace(/[\r\n]/g, '');
  if (!/^[A-Za-z0-9+/_-]+={0,3}$/.test(s)) return undefined;
  return Buffer.from(s.replace(/=+$/, '').replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

function unwrapBase64(text: string): string | undefined {
  const bytes = base64Bytes(text);
  return bytes && bytes.length > 0 ? utf8(bytes) : undefined;
}

type JsonResult = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * JSON.parse, plus one retry with bare NaN / Infinity / -Infinity turned into null: Python's json.dumps (posthog-python)
 * writes them and Django reads them as null.
 */
export function parseJson(text: string): JsonResult {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (e) {
    const error = (e as Error).message;
    if (!/NaN|Infinity/.test(text)) return { ok: false, error };
    try {
      return { ok: true, value: JSON.parse(nonFiniteToNull(text)) };
    } catch {
      return { ok: false, error };
    }
  }
}

// One pass: JSON strings are matched whole (and kept), so only bare tokens outside them are replaced.
const nonFiniteToNull = (text: string) =>
  text.replace(/"(?:[^"\\]|\\.)*"|-?Infinity|NaN/g, (m) => (m[0] === '"' ? m : 'null'));

/**
 * How deep a payload may nest. Deeper JSON cannot be written again: serialising it for the log (jsonb) overflows the
 * stack (a 100 000-deep array answered 500), so it is refused as malformed. capture-rs (serde_json) stops at 128;
 * this is looser so that nothing PostHog accepts is refused here.
 */
export const MAX_JSON_DEPTH = 1000;

const tooDeep = () =>
  invalidPayload(
    `Malformed request data: failed to parse request: the payload is nested more than ${MAX_JSON_DEPTH} levels deep`,
  );

function acceptJson(
  value: unknown,
  text: string,
  form: Record<string, string>,
  fromLz64: boolean,
): DecodedCaptureRequest {
  return { ok: true, payload: wellFormed(value, text, fromLz64), form, textLength: text.length };
}

/**
 * NUL and lone surrogates become U+FFFD (src/core/storable.ts), as in every other write. Text
 * decoded from UTF-8 carries them only as `\u` escapes (a scan for `\u` first: a clean payload
 * costs next to nothing), but an lz64 payload decompresses to a JS string that may hold a raw
 * lone surrogate, so that text is scanned for those too.
 */
const wellFormed = (value: unknown, text: string, fromLz64: boolean): unknown =>
  (fromLz64 ? mayHoldUnstorable(text) : escapesUnstorable(text)) ? storableValue(value) : value;
