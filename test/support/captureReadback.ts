import type { EventCapturedData } from '../../commands/capture/model/eventCaptured.ts';
import { propertiesWithPersonSets } from '../../commands/capture/model/personPropertiesFromEvent.ts';
import type { TestService } from './testService.ts';

/**
 * Reading captured events back, for the capture HTTP suites.
 *
 * The public way is `GET /api/projects/:id/events/?distinct_id=…` (personal API key). While that endpoint does not
 * exist yet (it answers 404), the events are read from the log itself through the service's own store: every
 * accepted event is appended as `EventCaptured` before the capture request is answered, so the log is what was
 * ingested. Either way the result is polled until the caller's condition holds (bounded), because the REST endpoint
 * reads a projection that may lag behind the answer.
 */
export type ReadbackEvent = {
  /** the event's uuid (client-supplied or generated at capture) */
  uuid: string;
  event: string;
  distinctId: string;
  properties: Record<string, unknown>;
  /** ISO 8601 UTC with milliseconds, whatever format the source used */
  timestamp: string;
  elementsChain: string;
  projectId: number;
  /** where it was read: the REST endpoint or the log */
  source: 'rest' | 'log';
};

export type ReadbackOptions = {
  /** defaults to the service's first project */
  projectId?: number;
  /** only events with this name */
  event?: string;
  /** done when this holds; default: at least `count` events (default 1) */
  until?: (events: ReadbackEvent[]) => boolean;
  count?: number;
  timeoutMs?: number;
  /** force a source (tests of the helper itself, or comparisons) */
  source?: 'rest' | 'log';
};

const POLL_MS = 100;

/** Events of one distinct id, oldest first, once `until` (or "at least `count`") holds; throws after the timeout. */
export async function readBackEvents(
  t: TestService,
  distinctId: string,
  options: ReadbackOptions = {},
): Promise<ReadbackEvent[]> {
  const projectId = options.projectId ?? t.projectId;
  const count = options.count ?? 1;
  const until = options.until ?? ((events: ReadbackEvent[]) => events.length >= count);
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  let last: ReadbackEvent[] = [];
  let lastSource = 'none';
  for (;;) {
    const fromRest =
      options.source === 'log' ? null : await readFromRest(t, projectId, distinctId, options.event);
    if (fromRest === null && options.source === 'rest') throw new Error('GET events/ answered 404');
    last =
      fromRest ??
      (await readFromLog(t, {
        projectId,
        distinctId,
        ...(options.event !== undefined ? { event: options.event } : {}),
      }));
    lastSource = fromRest ? 'rest' : 'log';
    if (until(last)) return last;
    if (Date.now() > deadline) {
      throw new Error(
        `read-back of distinct id ${JSON.stringify(distinctId)} (project ${projectId}, from ${lastSource}) did not reach the expected state; ` +
          `last saw ${last.length} event(s): ${JSON.stringify(last.map((e) => ({ event: e.event, uuid: e.uuid, timestamp: e.timestamp })))}`,
      );
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** One event by uuid, once readable. */
export async function readBackEvent(
  t: TestService,
  distinctId: string,
  uuid: string,
  options: Omit<ReadbackOptions, 'until' | 'count'> = {},
): Promise<ReadbackEvent> {
  const events = await readBackEvents(t, distinctId, {
    ...options,
    until: (es) => es.some((e) => e.uuid === uuid),
  });
  return events.find((e) => e.uuid === uuid)!;
}

/**
 * The log's EventCaptured records, in log order, optionally narrowed. Synchronous with the capture answer (the append
 * happens before it), so this is also the way to check that something was NOT ingested.
 */
export async function readFromLog(
  t: TestService,
  filter: { projectId?: number; distinctId?: string; event?: string; uuid?: string } = {},
): Promise<ReadbackEvent[]> {
  const recorded = await t.service.ctx.store.readAll({ filter: { eventTypes: ['EventCaptured'] } });
  return recorded
    .map((r) => r.data as EventCapturedData)
    .filter(
      (d) =>
        (filter.projectId === undefined || d.projectId === filter.projectId) &&
        (filter.distinctId === undefined || d.distinctId === filter.distinctId) &&
        (filter.event === undefined || d.event === filter.event) &&
        (filter.uuid === undefined || d.uuid === filter.uuid),
    )
    .map((d) => ({
      uuid: d.uuid,
      event: d.event,
      distinctId: d.distinctId,
      // as a reader sees them: with the person sets derived from the compact record
      properties: propertiesWithPersonSets(d),
      timestamp: d.timestamp,
      elementsChain: d.elementsChain,
      projectId: d.projectId,
      source: 'log' as const,
    }));
}

/** null while the endpoint answers 404 (not built yet); the events otherwise (every page). */
async function readFromRest(
  t: TestService,
  projectId: number,
  distinctId: string,
  event: string | undefined,
): Promise<ReadbackEvent[] | null> {
  const query = new URLSearchParams({ distinct_id: distinctId, limit: '1000' });
  if (event !== undefined) query.set('event', event);
  let path: string | null = `/api/projects/${projectId}/events/?${query}`;
  const events: ReadbackEvent[] = [];
  for (let page = 0; path !== null && page < 50; page++) {
    const res = await t.api('GET', path);
    if (res.status === 404) return null;
    if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${res.text}`);
    for (const row of res.body.results as any[]) {
      const properties =
        typeof row.properties === 'string' ? JSON.parse(row.properties) : (row.properties ?? {});
      events.push({
        uuid: String(row.uuid ?? row.id),
        event: row.event,
        distinctId: row.distinct_id,
        properties,
        timestamp: new Date(row.timestamp).toISOString(),
        elementsChain: row.elements_chain ?? '',
        projectId,
        source: 'rest',
      });
    }
    const next: string | null | undefined = res.body.next;
    path = next ? `${new URL(next).pathname}${new URL(next).search}` : null;
  }
  // The REST list is newest first (PostHog's order); callers get oldest first, like the log.
  return events.sort((a, b) =>
    a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0,
  );
}
