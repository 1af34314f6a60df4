import type { FastifyInstance } from 'fastify';
import client from 'prom-client';

export type Metrics = Readonly<{
  registry: client.Registry;
  /** events a capture request carried: accepted into the log, or dropped (with a warning) */
  capturedEvents: client.Counter<'outcome'>;
  /** events a capture request dropped (each with an ingestion warning), by the warning's type */
  droppedEvents: client.Counter<'reason'>;
  /** how long an append to the event log took (the acknowledgement path waits on it) */
  appendDuration: client.Histogram;
  /** adds a gauge read at each scrape (projection positions, the log head…) */
  gauge(name: string, help: string, labels: readonly string[], collect: GaugeCollect): void;
}>;

type GaugeCollect = (set: (labels: Record<string, string>, value: number) => void) => Promise<void>;

/**
 * Prometheus metrics of one service, in a registry of its own (tests run several services in
 * one process): process metrics, every request by route and status with its duration (the
 * `/decide/` and `/flags/` routes' latency among them), captured events by outcome, and the
 * gauges the service adds.
 */
export function createMetrics(): Metrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: 'hogstream_' });
  const capturedEvents = new client.Counter({
    name: 'hogstream_captured_events_total',
    help: 'Events received by the capture routes, by outcome (accepted into the log, dropped)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const droppedEvents = new client.Counter({
    name: 'hogstream_dropped_events_total',
    help: 'Captured events dropped with an ingestion warning, by the warning type',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const appendDuration = new client.Histogram({
    name: 'hogstream_event_append_duration_seconds',
    help: 'Appends to the event log (a group commit of capture requests, or a command), durable when done',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  return {
    registry,
    capturedEvents,
    droppedEvents,
    appendDuration,
    gauge(name, help, labels, collect) {
      new client.Gauge({
        name,
        help,
        labelNames: labels,
        registers: [registry],
        async collect() {
          this.reset();
          await collect((l, v) => this.set(l, v));
        },
      });
    },
  };
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

/**
 * Counts every request (route pattern, not the raw URL, so labels stay few) and serves
 * `GET /metrics` in Prometheus' text format: with `METRICS_TOKEN` set, to a bearer of it; without,
 * only to loopback clients, since the public routes face the internet.
 */
export function installMetrics(app: FastifyInstance, metrics: Metrics, token?: string): void {
  const requests = new client.Counter({
    name: 'hogstream_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [metrics.registry],
  });
  const duration = new client.Histogram({
    name: 'hogstream_http_request_duration_seconds',
    help: 'HTTP request duration by route',
    labelNames: ['route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [metrics.registry],
  });
  // Label sets are few (method × route × status); prom-client hashes a label object on every
  // call, so each set's child is kept (a measurable share of /decide's main thread otherwise).
  const children = new Map<
    string,
    {
      counter: client.Counter.Internal;
      histogram: client.Histogram.Internal<'route'>;
    }
  >();
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const key = `${request.method} ${route} ${reply.statusCode}`;
    let child = children.get(key);
    if (!child) {
      child = {
        counter: requests.labels(request.method, route, String(reply.statusCode)),
        histogram: duration.labels(route),
      };
      children.set(key, child);
    }
    child.counter.inc();
    child.histogram.observe(reply.elapsedTime / 1000);
    done();
  });
  app.get('/metrics', { schema: { tags: ['ops'], hide: true } }, async (request, reply) => {
    const allowed = token
      ? request.headers.authorization === `Bearer ${token}`
      : LOOPBACK.test(request.socket.remoteAddress ?? '');
    if (!allowed)
      return reply.status(403).send({
        type: 'authentication_error',
        code: 'permission_denied',
        detail: token
          ? 'GET /metrics needs the METRICS_TOKEN as a bearer token.'
          : 'GET /metrics answers loopback clients only unless METRICS_TOKEN is set.',
        attr: null,
      });
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
}
