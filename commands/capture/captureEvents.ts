import { randomUUID } from 'node:crypto';
import {
  DEFAULT_MAX_DECODED_BYTES,
  decodeCaptureRequest,
  inflateBody,
} from '../../ingress/decodeRequestBody.ts';
import type { GeoIp } from '../../ingress/geoip.ts';
import {
  type CaptureFailure,
  eventTooLarge,
  payloadTooLarge,
} from '../../ingress/ingressErrors.ts';
import type { RawCaptureRequest } from '../../ingress/requestContext.ts';
import { createProjectResolver, type ResolveProject } from '../../ingress/resolveProject.ts';
import { accessReader } from '../../projections/access/accessReader.ts';
import type { AppContext } from '../../src/appContext.ts';
import { uuidv5 } from '../../src/core/uuidv5.ts';
import type { StreamAppend } from '../../src/eventStore/eventStore.ts';
import { createGroupCommitter, type GroupCommitter } from '../../src/eventStore/groupCommit.ts';
import { enrichCapturedEvent, geoipPerRequest } from './enrichCapturedEvent.ts';
import {
  captureStream,
  type IngestionWarningData,
  ingestionWarningStream,
} from './model/eventCaptured.ts';
import { normalizeCapturedEvent, type Warning } from './normalizeCapturedEvent.ts';
import { type ParsedCaptureBatch, parseCaptureBatch } from './parseCaptureBatch.ts';
import { createProjectQuota, type ProjectQuota, type QuotaLimits } from './projectQuota.ts';

export type CaptureDeps = Readonly<{
  resolveProject: ResolveProject;
  committer: GroupCommitter;
  geoip: GeoIp;
  now: () => Date;
  limits: EventLimits;
  quota: ProjectQuota;
  /**
   * awaited by each entry point before it decodes a body: waits (bounded) while the read models
   * fed in memory lag far behind (src/processing/projectionBackpressure.ts); the callback it
   * resolves to is told, once the request is done, how many events it appended
   */
  admit?: () => Promise<(appendedEvents: number) => void>;
}>;

/** What one event may hold; a request with a larger event is refused (413) before anything is stored. */
export type EventLimits = Readonly<{
  /** the event as JSON: the single-event routes' body limit, so an event they accept fits in a batch too */
  maxEventBytes: number;
  /** keys of `properties`, `$set` and `$set_once` together: bounds what one event does to a person */
  maxEventProperties: number;
}>;

export const DEFAULT_EVENT_LIMITS: EventLimits = {
  maxEventBytes: 2 * 1024 * 1024,
  maxEventProperties: 10_000,
};

/**
 * Capture over the app's store (through a group committer) and the access read model (token →
 * project). The GeoIP reader loads a database file, so the caller opens it once (`openGeoIp`).
 */
export const captureDeps = (
  ctx: AppContext,
  geoip: GeoIp,
  limits: EventLimits = DEFAULT_EVENT_LIMITS,
  quota: QuotaLimits = { ratePerSecond: 0, burst: 0 },
): CaptureDeps => ({
  resolveProject: createProjectResolver(accessReader(ctx.pool)),
  committer: createGroupCommitter(ctx.store),
  geoip,
  now: ctx.now,
  limits,
  quota: createProjectQuota(quota),
});

const keyCount = (v: unknown) => (typeof v === 'object' && v !== null ? Object.keys(v).length : 0);

/**
 * The first event over a limit. Each check runs only when the decoded payload is large enough to
 * hold such an event (a property takes at least 6 characters of JSON), so ordinary requests pay
 * nothing for it.
 */
function oversizedEvent(
  items: readonly unknown[],
  textLength: number,
  limits: EventLimits,
): CaptureFailure | undefined {
  if (textLength > limits.maxEventBytes) {
    const index = items.findIndex(
      (item) => Buffer.byteLength(JSON.stringify(item) ?? '') > limits.maxEventBytes,
    );
    if (index !== -1) return eventTooLarge(index, `is over ${limits.maxEventBytes} bytes`);
  }
  if (textLength > limits.maxEventProperties * 6) {
    const index = items.findIndex((item) => {
      const properties = (item as { properties?: unknown } | null)?.properties;
      const p = (typeof properties === 'object' && properties !== null ? properties : {}) as Record<
        string,
        unknown
      >;
      return keyCount(p) + keyCount(p.$set) + keyCount(p.$set_once) > limits.maxEventProperties;
    });
    if (index !== -1)
      return eventTooLarge(index, `has more than ${limits.maxEventProperties} properties`);
  }
  return undefined;
}

export type CaptureOutcome =
  | {
      ok: true;
      status: 200 | 204;
      accepted: number;
      dropped: number;
      /** the dropped events by the type of the ingestion warning each left */
      droppedBy: Readonly<Record<string, number>>;
    }
  | CaptureFailure;

/**
 * Log ids are namespaced by project, so a client reusing another project's uuid cannot collide
 * with it, and stay deterministic, so a retry maps to the same id. For time-ordered (v7) client
 * uuids the id keeps their 48-bit time prefix: new ids then land at the end of the log's id index
 * instead of at random places in it, which keeps appends fast as the log grows.
 */
const LOG_ID_NAMESPACE = 'c2f8f8a4-3d0e-4b7e-9a51-2d5e0f6a7b10';
export const logIdFor = (projectId: number, uuid: string) => {
  const hashed = uuidv5(`${projectId}:${uuid}`, LOG_ID_NAMESPACE);
  return uuid[14] === '7' ? `${uuid.slice(0, 13)}${hashed.slice(13)}` : hashed;
};

/**
 * The capture use case: decode → parse → authenticate the token → normalise and enrich each event
 * → append everything durably (group commit) → answer. Nothing is acknowledged before it is in the log.
 */
export async function captureEvents(
  deps: CaptureDeps,
  request: RawCaptureRequest,
  ip: string | null,
): Promise<CaptureOutcome> {
  return whenAdmitted(deps, async () => {
    const inflated = await inflateBody(request.body);
    if (inflated === 'too_large') return payloadTooLarge(DEFAULT_MAX_DECODED_BYTES);
    const decoded = decodeCaptureRequest(request, inflated ? { inflatedBody: inflated } : {});
    if (!decoded.ok) return decoded;
    const batch = parseCaptureBatch(decoded.payload, {
      path: request.path,
      form: decoded.form,
      query: request.query,
    });
    if (!batch.ok) return batch;
    return captureBatch(deps, batch, { ...request, textLength: decoded.textLength }, ip);
  });
}

/**
 * Runs one request's capture once the backpressure lets it (`deps.admit`), before anything is
 * decoded, and tells it how many events went into the log, whatever the outcome.
 */
export async function whenAdmitted<T extends CaptureOutcome>(
  deps: Pick<CaptureDeps, 'admit'>,
  capture: () => Promise<T>,
): Promise<T> {
  const admitted = await deps.admit?.();
  let appended = 0;
  try {
    const outcome = await capture();
    if (outcome.ok) appended = outcome.accepted;
    return outcome;
  } finally {
    admitted?.(appended);
  }
}

/** Told which events of `batch.items` were dropped (by index), with the type of the warning each left. */
export type OnEventDropped = (index: number, reason: string) => void;

/**
 * The second half of the capture use case, from a parsed batch on: every wire format ends here
 * (the legacy endpoints through `captureEvents`, capture v1 through its own parser), so there is
 * one way an event gets into the log.
 */
export async function captureBatch(
  deps: CaptureDeps,
  batch: ParsedCaptureBatch,
  request: Pick<RawCaptureRequest, 'path' | 'query' | 'requestId'> & {
    /** length of the decoded JSON text: no event can be larger */
    textLength: number;
  },
  ip: string | null,
  onDropped?: OnEventDropped,
): Promise<CaptureOutcome> {
  const project = await deps.resolveProject(batch.token, batch.projectIdField);
  if (!project.ok) return project;
  const projectId = project.projectId;
  const oversized = oversizedEvent(batch.items, request.textLength, deps.limits);
  if (oversized) return oversized;

  const now = deps.now();
  const geoFor = geoipPerRequest(deps.geoip);
  const byStream = new Map<string, StreamAppend['events'][number][]>();
  // Keyed by id: a uuid repeated within one request would repeat its warning ids too.
  const warnings = new Map<string, IngestionWarningData>();
  const warn = (w: Warning) => {
    const eventUuid = typeof w.details.eventUuid === 'string' ? w.details.eventUuid : null;
    // A retried request repeats its warnings with the same ids, so they are not counted twice.
    const id = eventUuid
      ? uuidv5(`${projectId}:${eventUuid}:${w.type}`, LOG_ID_NAMESPACE)
      : randomUUID();
    if (!warnings.has(id))
      warnings.set(id, {
        projectId,
        type: w.type,
        eventUuid,
        details: w.details,
        at: now.toISOString(),
      });
  };
  // A uuid sent twice in one request (a client re-queueing an event into a batch that already holds it) is kept
  // once, as a retry would be. The log would also keep one, but the first in stream order; this keeps the first
  // the client sent, and skips enriching the repeat.
  const taken = new Set<string>();
  let accepted = 0;
  const droppedBy: Record<string, number> = {};
  const kept = deps.quota.take(projectId, batch.items.length);
  if (kept < batch.items.length) {
    droppedBy.rate_limited = batch.items.length - kept;
    if (onDropped) for (let i = kept; i < batch.items.length; i++) onDropped(i, 'rate_limited');
    warn({
      type: 'rate_limited',
      details: {
        dropped: batch.items.length - kept,
        reason: 'the project captured more events than its rate limit allows',
      },
    });
  }
  for (let index = 0; index < kept; index++) {
    const item = batch.items[index]!;
    const result = normalizeCapturedEvent(item, {
      projectId,
      now,
      sentAt: batch.sentAt,
      ip,
      path: request.path,
    });
    if (result.kind === 'dropped') {
      warn(result.warning);
      droppedBy[result.warning.type] = (droppedBy[result.warning.type] ?? 0) + 1;
      onDropped?.(index, result.warning.type);
      continue;
    }
    const id = logIdFor(projectId, result.data.uuid);
    if (taken.has(id)) continue;
    taken.add(id);
    result.warnings.forEach(warn);
    const data = enrichCapturedEvent(result.data, geoFor);
    const stream = captureStream(projectId, data.distinctId);
    const events = byStream.get(stream) ?? [];
    events.push({
      id,
      type: 'EventCaptured',
      data,
      metadata: { projectId, occurredAt: data.receivedAt, correlationId: request.requestId },
    });
    byStream.set(stream, events);
    accepted++;
  }

  const appends: StreamAppend[] = [...byStream].map(([streamName, events]) => ({
    streamName,
    events,
    expectedRevision: 'any',
  }));
  if (warnings.size > 0) {
    appends.push({
      streamName: ingestionWarningStream(projectId),
      events: [...warnings].map(([id, data]) => ({
        id,
        type: 'IngestionWarningRecorded',
        data,
        metadata: { projectId, occurredAt: data.at, correlationId: request.requestId },
      })),
      expectedRevision: 'any',
    });
  }
  await deps.committer.append(appends);
  return {
    ok: true,
    status: request.query.beacon === '1' ? 204 : 200,
    accepted,
    dropped: batch.items.length - accepted,
    droppedBy,
  };
}
