import http from 'node:http';
import { gzipSync as zlibGzipSync } from 'node:zlib';
import { gzipSync as fflateGzipSync, strToU8 } from 'fflate';
import LZString from 'lz-string';

/**
 * Raw HTTP for the capture suites: node:http rather than fetch, so that a request carries exactly the headers the
 * test names (fetch adds a Content-Type to string bodies and rewrites others), bodies can be streamed (a 400 MiB
 * upload is never built in memory), and an answer that comes before the upload ends (413) is read, after which the
 * upload is abandoned.
 */
export type CaptureResponse = {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** the parsed body, or undefined when it is empty or not JSON */
  json: any;
};

/** A body too large to hold: the parts are sent in order, `repeat` parts as `count` copies of `char`. */
export type StreamedBody = { parts: Array<string | Buffer | { char: string; count: number }> };

export type RawRequest = {
  method?: string;
  /** path with the query already on it, or use `query` */
  path: string;
  /** raw query string (already encoded), without '?' */
  query?: string;
  headers?: Record<string, string>;
  body?: string | Buffer | Uint8Array | StreamedBody;
  /** send without Content-Length (chunked) */
  chunked?: boolean;
};

const CHUNK = 1 << 20;

function bodyLength(body: RawRequest['body']): number {
  if (body === undefined) return 0;
  if (typeof body === 'string') return Buffer.byteLength(body);
  if (body instanceof Uint8Array) return body.length;
  return body.parts.reduce(
    (n, p) =>
      n +
      (typeof p === 'string'
        ? Buffer.byteLength(p)
        : Buffer.isBuffer(p)
          ? p.length
          : Buffer.byteLength(p.char) * p.count),
    0,
  );
}

function* bodyChunks(body: RawRequest['body']): Generator<Buffer> {
  if (body === undefined) return;
  if (typeof body === 'string') return yield Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return yield Buffer.from(body);
  for (const p of body.parts) {
    if (typeof p === 'string') yield Buffer.from(p, 'utf8');
    else if (Buffer.isBuffer(p)) yield p;
    else {
      const unit = Buffer.from(p.char, 'utf8');
      const perChunk = Math.max(1, Math.floor(CHUNK / unit.length));
      const block = Buffer.alloc(perChunk * unit.length, unit);
      let left = p.count;
      while (left > 0) {
        const n = Math.min(left, perChunk);
        yield n === perChunk ? block : block.subarray(0, n * unit.length);
        left -= n;
      }
    }
  }
}

/** Sends one request to `baseUrl` exactly as described; resolves with the answer. */
export function sendRaw(baseUrl: string, req: RawRequest): Promise<CaptureResponse> {
  const url = new URL(baseUrl);
  const path = req.query !== undefined && req.query !== '' ? `${req.path}?${req.query}` : req.path;
  const headers: Record<string, string> = { ...(req.headers ?? {}) };
  const hasBody =
    req.body !== undefined &&
    !(typeof req.body === 'string' && req.body === '' && (req.method ?? 'POST') === 'GET');
  if (
    hasBody &&
    !req.chunked &&
    !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length')
  ) {
    headers['Content-Length'] = String(bodyLength(req.body));
  }
  if (req.chunked) headers['Transfer-Encoding'] = 'chunked';
  return new Promise<CaptureResponse>((resolve, reject) => {
    let answered = false;
    const request = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: req.method ?? 'POST',
        path,
        headers,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          answered = true;
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text === '' ? undefined : JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
          // An answer before the end of the upload (413): stop sending.
          request.destroy();
        });
        res.on('error', (e) => (answered ? undefined : reject(e)));
      },
    );
    // EPIPE / ECONNRESET after the server answered and closed are expected when it refused the upload.
    request.on('error', (e) => (answered ? undefined : reject(e)));
    if (!hasBody) return void request.end();
    const chunks = bodyChunks(req.body);
    const pump = () => {
      for (;;) {
        if (answered || request.destroyed) return;
        const next = chunks.next();
        if (next.done) return void request.end();
        if (!request.write(next.value)) return void request.once('drain', pump);
      }
    };
    pump();
  });
}

/* ---- bodies the way the real clients build them ---- */

/** posthog-js: fflate's gzip with mtime 0 (capture.md §1.5). */
export const gzipJs = (json: string): Buffer =>
  Buffer.from(fflateGzipSync(strToU8(json), { mtime: 0 }));
/** posthog-node v5 and posthog-python: node zlib. */
export const gzipNode = (json: string): Buffer => zlibGzipSync(json);
/** posthog-js's old lz64 mode and posthog-node v4's form mode. */
export const lz64 = (json: string): string => LZString.compressToBase64(json);
export const base64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

/** application/x-www-form-urlencoded the way URLSearchParams writes it (space → '+', '+' → %2B). */
export const urlencodedForm = (fields: Record<string, string>): string =>
  new URLSearchParams(fields).toString();

/** A multipart body with a fixed boundary (as Django's test client builds it); values may be bytes. */
export function multipartBody(
  fields: Record<string, string | Buffer>,
  boundary = 'BoUnDaRyStRiNg',
): { body: Buffer; contentType: string } {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    const binary = Buffer.isBuffer(value);
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${binary ? `; filename="${name}"` : ''}\r\n` +
          `${binary ? 'Content-Type: application/octet-stream\r\n' : ''}\r\n`,
        'utf8',
      ),
      binary ? value : Buffer.from(value, 'utf8'),
      Buffer.from('\r\n', 'utf8'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`, 'utf8'));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** The one success answer (decision 3). */
export const OK_TEXT = '{"status":1}';
