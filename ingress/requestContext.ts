/**
 * What the public entry points (capture, /decide and /flags) know of an HTTP request besides its
 * route: the request as the routes hand it to their use cases, its query flattened, and the
 * client's IP. Fastify's types stay in the routes; this takes plain records.
 */

/** A request as a public route hands it over. */
export type RawCaptureRequest = {
  method: string;
  /** normalised route: '/e', '/i/v0/e', '/capture', '/batch', '/track', '/engage' (a trailing slash is tolerated) */
  path: string;
  query: Record<string, string | undefined>;
  /** lower-case names */
  headers: Record<string, string | undefined>;
  body: Buffer | undefined;
  /** the caller's X-Request-Id, kept in the metadata of the events the request appends */
  requestId?: string | undefined;
};

/** the first of a repeated parameter, as text */
export function flatQuery(query: unknown): Record<string, string | undefined> {
  const flat: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries((query ?? {}) as Record<string, unknown>))
    flat[k] = Array.isArray(v) ? String(v[0]) : v === undefined ? undefined : String(v);
  return flat;
}

/** An IPv4 address written as IPv6 (`::ffff:192.0.2.1`): GeoIP and the client IP read the IPv4 in it. */
export const IPV4_MAPPED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

function headerValue(
  headers: Record<string, string | string[] | undefined>,
  name: string,
): string | undefined {
  let value = headers[name];
  if (value === undefined) {
    const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
    value = key === undefined ? undefined : headers[key];
  }
  return Array.isArray(value) ? value.join(',') : value;
}

function normalizeIp(raw: string): string | null {
  let ip = raw.trim();
  const bracketed = /^\[([^\]]*)\](?::\d*)?$/.exec(ip);
  if (bracketed) ip = bracketed[1]!;
  // As Django's capture does: exactly one colon means "IPv4:port" (IPv6 has at least two).
  else if (ip.split(':').length === 2) ip = ip.split(':')[0]!;
  const mapped = IPV4_MAPPED.exec(ip);
  if (mapped) ip = mapped[1]!;
  return ip === '' ? null : ip;
}

/** Client IP: first X-Forwarded-For hop (IPv4 port stripped, IPv6 kept), else the socket address. */
export function clientIp(
  headers: Record<string, string | string[] | undefined>,
  socketIp: string | undefined,
): string | null {
  const forwarded = headerValue(headers, 'x-forwarded-for');
  if (forwarded !== undefined && forwarded.trim() !== '') {
    const first = normalizeIp(forwarded.split(',')[0]!);
    if (first) return first;
  }
  return socketIp ? normalizeIp(socketIp) : null;
}
