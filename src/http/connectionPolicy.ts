import type { ServerOptions } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** How long a connection may stay and how many may be open (docs/RELIABILITY.md, "Connections"). */
export type ConnectionPolicy = Readonly<{
  /** a request's headers must have arrived this long after the connection opened (or its last answer) */
  headersTimeoutMs: number;
  /** the whole request (headers and body) must have arrived by then; the answer may take longer */
  requestTimeoutMs: number;
  /** an idle keep-alive connection is closed after this */
  keepAliveTimeoutMs: number;
  /** open connections at most; a new one past it is closed at once */
  maxConnections: number;
}>;

/**
 * Node checks the header and request timeouts on a timer (30 s by default), so a socket that never
 * sends a byte lived up to 30 s past its timeout: 60–90 s with the defaults. A check every second
 * walks the open connections' list, which is cheap next to holding thousands of them.
 */
const CONNECTIONS_CHECKING_INTERVAL_MS = 1_000;

/** Fastify's server options for the policy. */
export function connectionServerOptions(policy: ConnectionPolicy): {
  http: ServerOptions;
  requestTimeout: number;
  keepAliveTimeout: number;
} {
  return {
    // Not `connectionTimeout` (the socket's inactivity timeout): it would also cut an answer
    // that takes longer to compute than the timeout, e.g. a year of hourly trends.
    http: {
      headersTimeout: policy.headersTimeoutMs,
      requestTimeout: policy.requestTimeoutMs,
      connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
    },
    requestTimeout: policy.requestTimeoutMs,
    keepAliveTimeout: policy.keepAliveTimeoutMs,
  };
}

/** Past the limit every new connection is dropped before any byte is read; the log says so once a minute. */
export function installConnectionLimit(app: FastifyInstance, policy: ConnectionPolicy): void {
  app.server.maxConnections = policy.maxConnections;
  let dropped = 0;
  let lastLog = 0;
  app.server.on('drop', () => {
    dropped++;
    const now = Date.now();
    if (now - lastLog < 60_000) return;
    lastLog = now;
    app.log.warn(
      { dropped, maxConnections: policy.maxConnections },
      'connections refused: HTTP_MAX_CONNECTIONS open connections reached',
    );
    dropped = 0;
  });
}
