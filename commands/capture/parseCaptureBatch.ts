import {
  type CaptureFailure,
  invalidPayload,
  malformedApiKey,
  missingApiKey,
  type TokenShapeProblem,
} from '../../ingress/ingressErrors.ts';
import { epochToDate } from './parseTimestamp.ts';
import { parseUuid } from './uuid.ts';

/**
 * From decoded JSON to the list of raw events of one request, plus what belongs to the request as a whole: the project
 * key (shape-checked only — whether a project owns it needs the database, so that is the route's job), the personal-key
 * `project_id`, the client's send time and the historical-migration flag. Request-level malformations are rejected
 * here (decision 4); per-event problems that only drop one event are left to normalizeCapturedEvent (decision 1).
 */
export type CaptureBatchContext = {
  path: string;
  form: Record<string, string>;
  query: Record<string, string | undefined>;
};

export type ParsedCaptureBatch = {
  ok: true;
  /** trimmed, shape-checked; may be a personal key (`phx_…`), which the route authenticates with `projectIdField` */
  token: string;
  /** body (or form / query) `project_id`, for personal-key capture (decision 2); not validated here */
  projectIdField: unknown;
  /** raw send time: body `sent_at`, form `sent_at`, query `_` / `sent_at` (numeric epochs already turned into ISO) */
  sentAt: string | undefined;
  historicalMigration: boolean;
  /** validated event objects, in request order, `$performance_event`s left out */
  items: Record<string, unknown>[];
};

type Json = Record<string, unknown>;

export function parseCaptureBatch(
  payload: unknown,
  ctx: CaptureBatchContext,
): ParsedCaptureBatch | CaptureFailure {
  // Shapes in capture-rs's order (capture.md §1.2): array, batch envelope, single event (nameless engage included).
  let envelope: Json | undefined;
  let rawItems: unknown[];
  if (Array.isArray(payload)) {
    rawItems = payload;
  } else if (isObject(payload)) {
    if (payload.batch === undefined || payload.batch === null) {
      rawItems = [payload];
    } else if (Array.isArray(payload.batch)) {
      envelope = payload;
      rawItems = payload.batch;
    } else if (typeof payload.batch === 'string') {
      // A JSON-encoded batch: Django iterates the string and complains about its first character.
      return invalidPayload("Invalid payload: All events must be dictionaries not 'str'!");
    } else {
      return invalidPayload(
        `Invalid payload: "batch" must be a list of events, received ${pyType(payload.batch)}!`,
      );
    }
  } else {
    return invalidPayload(
      `Invalid payload: expected an event, a list of events or a batch, received ${pyType(payload)}!`,
    );
  }
  if (rawItems.length === 0) return invalidPayload('Invalid payload: request holds no event');

  // The key comes before the events are looked at: a request without one is a 401 whatever else is wrong with it.
  const token = findToken(envelope, rawItems, ctx);
  if (typeof token !== 'string') return token;

  const items: Json[] = [];
  for (const raw of rawItems) {
    if (raw === null || raw === undefined)
      return invalidPayload('Invalid payload: some events are null');
    if (!isObject(raw))
      return invalidPayload(
        `Invalid payload: All events must be dictionaries not '${pyType(raw)}'!`,
      );
    const problem = eventProblem(raw);
    if (problem) return invalidPayload(problem);
    // Dropped without a warning by Django and 2025+ capture-rs; a request made only of them still gets 200.
    if (raw.event === '$performance_event') continue;
    items.push(raw);
  }

  const top = isObject(payload) ? payload : undefined;
  return {
    ok: true,
    token,
    projectIdField: present(top?.project_id)
      ? top?.project_id
      : (nonEmpty(ctx.form.project_id) ?? nonEmpty(ctx.query.project_id)),
    sentAt: findSentAt(top, ctx),
    historicalMigration: top?.historical_migration === true,
    items,
  };
}

/** The malformations of decision 4 that concern one event (and reject the whole request, as Django does). */
function eventProblem(event: Json): string | undefined {
  if (event.properties !== undefined && !isObject(event.properties)) {
    return `Invalid payload: Properties must be a JSON object, received ${pyType(event.properties)}!`;
  }
  // "" counts as absent (capture-rs); anything else must read as a UUID.
  const uuid = event.uuid;
  if (present(uuid) && uuid !== '' && (typeof uuid !== 'string' || parseUuid(uuid) === null)) {
    return 'Invalid payload: Event field "uuid" is not a valid UUID!';
  }
  // Django checks the offset inside `properties` too (capture.md §2.1).
  for (const offset of [
    event.offset,
    isObject(event.properties) ? event.properties.offset : undefined,
  ]) {
    if (present(offset) && !(typeof offset === 'number' && Number.isFinite(offset))) {
      return `Invalid payload: Event field "offset" must be numeric, received ${pyType(offset)}!`;
    }
  }
  return undefined;
}

/**
 * Decision 2's order: envelope `api_key`/`token`; the events' `api_key`/`token`/`$token`, then `properties.token`;
 * form `api_key`/`token`; query `token`/`api_key`. A JSON field that is present but empty is taken (and then fails
 * the shape check, as capture-rs answers "API key is not valid: empty"); empty form/query values are skipped.
 * Returns the trimmed token, or the 400 / 401 failure.
 */
function findToken(
  envelope: Json | undefined,
  rawItems: unknown[],
  ctx: CaptureBatchContext,
): string | CaptureFailure {
  let found: unknown = envelope ? firstPresent(envelope, ['api_key', 'token']) : undefined;
  if (found === undefined) {
    // Events without a key of their own inherit the request's; two different keys cannot be routed (decision 4).
    const seen = new Map<string, unknown>();
    for (const item of rawItems) {
      if (!isObject(item)) continue;
      const t = eventToken(item);
      if (t !== undefined)
        seen.set(typeof t === 'string' ? `s:${t.trim()}` : `j:${JSON.stringify(t)}`, t);
    }
    if (seen.size > 1)
      return invalidPayload('Invalid payload: batch submitted with inconsistent api_key values');
    found = seen.values().next().value;
  }
  found ??=
    nonEmpty(ctx.form.api_key) ??
    nonEmpty(ctx.form.token) ??
    nonEmpty(ctx.query.token) ??
    nonEmpty(ctx.query.api_key);
  if (found === undefined) return missingApiKey();
  const problem = tokenShapeProblem(found);
  return problem ? malformedApiKey(problem) : (found as string).trim();
}

function eventToken(event: Json): unknown {
  const own = firstPresent(event, ['api_key', 'token', '$token']);
  if (own !== undefined) return own;
  // capture-rs reads properties.token only when it is a string: a user property called "token" may be anything.
  const props = event.properties;
  return isObject(props) && typeof props.token === 'string' ? props.token : undefined;
}

/** Token shape checks of both PostHog implementations (capture.md §1.3), surrounding whitespace trimmed first. */
export function tokenShapeProblem(token: unknown): TokenShapeProblem | undefined {
  if (typeof token !== 'string') return 'not_string';
  const t = token.trim();
  if (t === '') return 'empty';
  if (t.length > 64) return 'too_long';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range is the rule (capture.md token shape)
  if (!/^[\x00-\x7f]*$/.test(t)) return 'not_ascii';
  if (t.includes('\0')) return 'null_byte';
  return undefined;
}

/**
 * Body `sent_at` (envelope or single event; capture-rs lets it win over the query), then the form field, then the
 * query's `_` / `sent_at`. Digit strings and numbers are epochs (Django: ≤ 11 digits seconds, else ms).
 */
function findSentAt(top: Json | undefined, ctx: CaptureBatchContext): string | undefined {
  for (const value of [top?.sent_at, ctx.form.sent_at, ctx.query._, ctx.query.sent_at]) {
    if (typeof value === 'number') return epochToDate(value)?.toISOString();
    if (typeof value !== 'string' || value.trim() === '') continue;
    const s = value.trim();
    return /^\d+$/.test(s) ? (epochToDate(Number(s))?.toISOString() ?? s) : s;
  }
  return undefined;
}

const present = (v: unknown) => v !== undefined && v !== null;
const nonEmpty = (s: string | undefined) => (s === undefined || s === '' ? undefined : s);

function firstPresent(obj: Json, keys: string[]): unknown {
  for (const k of keys) if (present(obj[k])) return obj[k];
  return undefined;
}

export const isObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Type names as Django's messages spell them. */
function pyType(v: unknown): string {
  if (v === null || v === undefined) return 'NoneType';
  if (Array.isArray(v)) return 'list';
  switch (typeof v) {
    case 'string':
      return 'str';
    case 'boolean':
      return 'bool';
    case 'number':
      return Number.isInteger(v) ? 'int' : 'float';
    case 'object':
      return 'dict';
    default:
      return typeof v;
  }
}
