import { z } from 'zod';
import {
  type CaptureFailure,
  invalidPayload,
  malformedApiKey,
  missingApiKey,
} from '../../ingress/ingressErrors.ts';
import { type ParsedCaptureBatch, tokenShapeProblem } from './parseCaptureBatch.ts';
import { parseUuid } from './uuid.ts';

/**
 * Capture v1 (`POST /i/v1/analytics/events`, posthog-python's `capture_mode="v1"`, PostHog's
 * rust/capture/src/v1/analytics): the project key in `Authorization: Bearer`, a body
 * `{created_at, historical_migration?, batch: [{event, uuid, distinct_id, timestamp, session_id?,
 * window_id?, options?, properties?}]}`, and `$lib`/`$lib_version` in the `PostHog-Sdk-Info`
 * header. This turns it into the batch the legacy parser makes, so the one capture use case
 * (`captureBatch`) takes it from there.
 */
export const CaptureV1Event = z.object({
  event: z.string().min(1, 'event submitted without an event name'),
  uuid: z
    .string()
    .trim()
    .refine((u) => parseUuid(u) !== null, 'not a valid UUID'),
  distinct_id: z.string().trim(),
  timestamp: z.string(),
  session_id: z.string().nullish(),
  window_id: z.string().nullish(),
  options: z.record(z.string(), z.unknown()).nullish(),
  properties: z.record(z.string(), z.unknown()).optional(),
});

export const CaptureV1Body = z.object({
  created_at: z.string(),
  historical_migration: z.boolean().optional(),
  batch: z.array(CaptureV1Event).min(1, 'request batch is empty'),
});
export type CaptureV1Body = z.infer<typeof CaptureV1Body>;

/** One event of the answer: `ok`, or `drop` with why (PostHog also has `warning` and `retry`). */
export type CaptureV1Result = { result: 'ok' } | { result: 'drop'; details: string };

export type ParsedCaptureV1 = {
  ok: true;
  batch: ParsedCaptureBatch;
  /** the uuid of each event of `batch.items`, by index */
  itemUuids: string[];
  /** every event's uuid, in request order, with a drop decided here (options of the wrong type) */
  results: Map<string, CaptureV1Result>;
};

/** PostHog's coercion of a boolean option: bools, "true"/"false"/"1"/"0", numbers (non-zero is true). */
function coerceBool(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (s === 'true' || s === '1') return true;
    if (s === 'false' || s === '0') return false;
  }
  return undefined;
}
const coerceString = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : Number.isInteger(v) ? String(v) : undefined;

/** The typed `options` and the properties they stand for; undefined when one has the wrong type. */
const OPTIONS = [
  ['cookieless_mode', '$cookieless_mode', coerceBool],
  ['disable_skew_correction', '$ignore_sent_at', coerceBool],
  ['product_tour_id', '$product_tour_id', coerceString],
  ['process_person_profile', '$process_person_profile', coerceBool],
] as const;

function optionProperties(options: Record<string, unknown>): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const [name, property, coerce] of OPTIONS) {
    const raw = options[name];
    if (raw === undefined || raw === null) continue;
    const value = coerce(raw);
    if (value === undefined) return undefined;
    out[property] = value;
  }
  return out;
}

/** `posthog-python/7.53.0` → `['posthog-python', '7.53.0']`; anything else adds nothing. */
export function sdkLibAndVersion(header: string | undefined): [string, string] | undefined {
  const match = /^\s*([^/\s]{1,100})\/([^/\s]{1,100})\s*$/.exec(header ?? '');
  return match ? [match[1]!, match[2]!] : undefined;
}

/** `Authorization: Bearer <project API key>` → the key, or capture's 401 when there is none. */
export function captureV1Token(authorization: string | undefined): string | CaptureFailure {
  const token = /^Bearer\s+(.*)$/i.exec(authorization ?? '')?.[1]?.trim();
  if (!token) return missingApiKey();
  const problem = tokenShapeProblem(token);
  return problem ? malformedApiKey(problem) : token;
}

export function parseCaptureV1Batch(
  body: unknown,
  headers: Readonly<{ authorization?: string; sdkInfo?: string; requestTimestamp?: string }>,
): ParsedCaptureV1 | CaptureFailure {
  const token = captureV1Token(headers.authorization);
  if (typeof token !== 'string') return token;
  const parsed = CaptureV1Body.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
    return invalidPayload(`Invalid payload${where}: ${issue.message}`);
  }
  const lib = sdkLibAndVersion(headers.sdkInfo);
  const items: Record<string, unknown>[] = [];
  const itemUuids: string[] = [];
  const results = new Map<string, CaptureV1Result>();
  for (const e of parsed.data.batch) {
    const fromOptions = optionProperties(e.options ?? {});
    if (!fromOptions) {
      results.set(e.uuid, { result: 'drop', details: 'invalid_options' });
      continue;
    }
    if (!results.has(e.uuid)) results.set(e.uuid, { result: 'ok' });
    // Header and options win over the client's own keys, as PostHog splices them in after.
    const properties: Record<string, unknown> = { ...e.properties, ...fromOptions };
    if (e.session_id) properties.$session_id = e.session_id;
    if (e.window_id) properties.$window_id = e.window_id;
    if (lib) [properties.$lib, properties.$lib_version] = lib;
    items.push({
      event: e.event,
      uuid: e.uuid,
      distinct_id: e.distinct_id,
      timestamp: e.timestamp,
      properties,
    });
    itemUuids.push(e.uuid);
  }
  return {
    ok: true,
    batch: {
      ok: true,
      token,
      projectIdField: undefined,
      sentAt: headers.requestTimestamp ?? parsed.data.created_at,
      historicalMigration: parsed.data.historical_migration === true,
      items,
    },
    itemUuids,
    results,
  };
}
