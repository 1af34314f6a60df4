import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** capture, /decide, /flags: counted into a summary line instead of a line per request */
    summarisedLogs?: boolean;
  }
}

type Tally = { count: number; totalMs: number; maxMs: number };

/**
 * Request logs at `info`: one line per request of the API (method, route, path without the query
 * string, which may hold a project token, status, duration, request id), and for the public
 * high-volume routes one summary line per interval (requests by route and status, mean and
 * longest duration): a line per capture or /decide request would cost more than the request.
 * Failures are logged where they happen (the error handler), whatever the route.
 */
export function installRequestLogging(app: FastifyInstance, summaryEveryMs = 10_000): void {
  let tallies = new Map<string, Tally>();
  let since = Date.now();
  const flush = () => {
    if (tallies.size === 0) return;
    const requests: Record<string, { count: number; mean_ms: number; max_ms: number }> = {};
    for (const [key, t] of tallies)
      requests[key] = {
        count: t.count,
        mean_ms: Math.round((t.totalMs / t.count) * 100) / 100,
        max_ms: Math.round(t.maxMs * 100) / 100,
      };
    app.log.info(
      { window_s: Math.round((Date.now() - since) / 1000), requests },
      'public requests',
    );
    tallies = new Map();
    since = Date.now();
  };
  const timer = setInterval(flush, summaryEveryMs).unref();
  app.addHook('onClose', (_app, done) => {
    clearInterval(timer);
    flush();
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    if (request.routeOptions.config?.summarisedLogs) {
      const key = `${request.method} ${request.routeOptions.url} ${reply.statusCode}`;
      const t = tallies.get(key) ?? { count: 0, totalMs: 0, maxMs: 0 };
      t.count++;
      t.totalMs += reply.elapsedTime;
      t.maxMs = Math.max(t.maxMs, reply.elapsedTime);
      tallies.set(key, t);
    } else {
      const q = request.url.indexOf('?');
      request.log.info(
        {
          method: request.method,
          route: request.routeOptions.url ?? null,
          path: q < 0 ? request.url : request.url.slice(0, q),
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime * 100) / 100,
        },
        'request',
      );
    }
    done();
  });
}
