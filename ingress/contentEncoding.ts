import { promisify } from 'node:util';
import { brotliDecompress, inflate } from 'node:zlib';
import { validation } from '../src/core/errors.ts';
import { DEFAULT_MAX_DECODED_BYTES, inflateBody, inflateOptions } from './decodeRequestBody.ts';
import { type CaptureFailure, invalidPayload, payloadTooLarge } from './ingressErrors.ts';

const inflateAsync = promisify(inflate);
const brotliAsync = promisify(brotliDecompress);

/**
 * A body as its `Content-Encoding` says it was compressed (capture v1 names it; the legacy
 * endpoints sniff instead): gzip, zlib-wrapped deflate (RFC 1950, what posthog-python sends),
 * br, or none. Decompressed off the event loop and capped, as gzip is on the legacy endpoints.
 * zstd is refused by name: Node 20's zlib has no zstd (posthog-python sends it only when asked).
 */
export async function decodeContentEncoding(
  body: Buffer,
  encoding: string | undefined,
  max = DEFAULT_MAX_DECODED_BYTES,
): Promise<Buffer | CaptureFailure> {
  const name = (encoding ?? '').trim().toLowerCase();
  if (name === '' || name === 'identity' || name === 'none') return body;
  if (name === 'gzip') {
    const out = await inflateBody(body, max);
    if (out === 'too_large') return payloadTooLarge(max);
    return out ?? invalidPayload('Failed to decode request body: not a gzip stream.');
  }
  const decoder = name === 'deflate' ? inflateAsync : name === 'br' ? brotliAsync : undefined;
  if (!decoder)
    return {
      ok: false,
      error: validation(
        'unsupported_encoding',
        `Unsupported content encoding: ${name.slice(0, 40)} (send gzip, deflate, br or none).`,
      ),
    };
  try {
    return await decoder(body, inflateOptions(body, max));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return payloadTooLarge(max);
    return invalidPayload(`Failed to decode request body: not a ${name} stream.`);
  }
}
