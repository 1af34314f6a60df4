import {
  type DecodedCaptureRequest,
  decodeCaptureRequest,
  inflateBody,
} from '../../ingress/decodeRequestBody.ts';
import { PROJECT_KEY_HINT } from '../../ingress/ingressErrors.ts';
import type { RawCaptureRequest } from '../../ingress/requestContext.ts';
import { type DomainError, tooLarge, unauthenticated, validation } from '../../src/core/errors.ts';

/**
 * What /decide and /flags read from a request (flags.md §4.1), once decoded: JSON, form `data=`
 * (base64), gzip or lz64 bodies, through capture's decoder.
 */
export type DecideInput = {
  token: string;
  projectIdField: unknown;
  distinctId: string;
  groups: Record<string, string>;
  personProperties: Record<string, unknown> | undefined;
  groupProperties: Record<string, Record<string, unknown>> | undefined;
  anonDistinctId: string | undefined;
  deviceId: string | null;
  disableFlags: boolean;
  geoipDisable: boolean;
  flagKeys: string[] | undefined;
};

export type DecideFailure = { ok: false; error: DomainError };

/** Longer than capture accepts (200), so no person can have it; still evaluated by hash. */
export const MAX_DECIDE_DISTINCT_ID_LENGTH = 1_000;
/** Compressed bodies may not expand past this (a gzip bomb is small on the wire). */
export const DECIDE_MAX_DECODED_BYTES = 4 * 1024 * 1024;

/**
 * A request's `groups` and `group_properties` entries: a project has at most 5 group types, so
 * 100 is generous (200,000 entries cost 2.9 s of evaluation each).
 */
export const MAX_DECIDE_GROUPS = 100;
/** Keys of `person_properties`, and of each group's properties (their total size: the body limit). */
export const MAX_DECIDE_PROPERTY_KEYS = 10_000;

const refuse = (error: DomainError): DecideFailure => ({ ok: false, error });
export const malformed = (detail: string) =>
  refuse(validation('malformed_data', `Malformed request data: ${detail}`));
export const noApiKey = () =>
  refuse(unauthenticated('no_api_key', `No project API key provided. ${PROJECT_KEY_HINT}`));

const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** Python truthiness of a JSON value (`disable_flags`, `geoip_disable`). */
const truthy = (v: unknown): boolean =>
  Array.isArray(v)
    ? v.length > 0
    : isRecord(v)
      ? Object.keys(v).length > 0
      : v === 'false' || v === 'False' || v === '0'
        ? false
        : Boolean(v);

const idString = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined;

function stringMap(v: unknown): Record<string, string> {
  if (!isRecord(v)) return {};
  const out: Record<string, string> = {};
  for (const [k, value] of Object.entries(v)) {
    const s = idString(value);
    if (s !== undefined) out[k] = s;
  }
  return out;
}

function groupProps(v: unknown): Record<string, Record<string, unknown>> | undefined {
  if (!isRecord(v)) return undefined;
  const out: Record<string, Record<string, unknown>> = {};
  for (const [k, value] of Object.entries(v)) if (isRecord(value)) out[k] = value;
  return out;
}

const keyCount = (v: unknown): number => {
  if (!isRecord(v)) return 0;
  let n = 0;
  for (const _ in v) n++;
  return n;
};

/** The first of the request's maps over its bound (groups, properties), as a 400's text. */
function oversized(payload: Record<string, unknown>): { detail: string; attr: string } | undefined {
  for (const attr of ['groups', 'group_properties'] as const)
    if (keyCount(payload[attr]) > MAX_DECIDE_GROUPS)
      return { attr, detail: `${attr} has more than ${MAX_DECIDE_GROUPS} entries` };
  if (keyCount(payload.person_properties) > MAX_DECIDE_PROPERTY_KEYS)
    return {
      attr: 'person_properties',
      detail: `person_properties has more than ${MAX_DECIDE_PROPERTY_KEYS} keys`,
    };
  const groups = isRecord(payload.group_properties) ? payload.group_properties : {};
  for (const [type, properties] of Object.entries(groups))
    if (keyCount(properties) > MAX_DECIDE_PROPERTY_KEYS)
      return {
        attr: 'group_properties',
        detail: `group_properties.${type} has more than ${MAX_DECIDE_PROPERTY_KEYS} keys`,
      };
  return undefined;
}

/** Decodes the body (gzip inflated off the event loop) into the JSON the client sent. */
export async function decodeDecideBody(
  raw: RawCaptureRequest,
): Promise<DecodedCaptureRequest | DecideFailure> {
  const inflated = await inflateBody(raw.body, DECIDE_MAX_DECODED_BYTES);
  if (inflated === 'too_large') return refuse(tooLarge(tooLargeDetail));
  const decoded = decodeCaptureRequest(raw, {
    maxDecodedBytes: DECIDE_MAX_DECODED_BYTES,
    ...(inflated ? { inflatedBody: inflated } : {}),
  });
  if (decoded.ok) return decoded;
  if (decoded.error.kind === 'too_large') return refuse(tooLarge(tooLargeDetail));
  return malformed(decoded.error.detail.replace(/^Malformed request data: /, ''));
}
const tooLargeDetail = `the decoded payload is over ${DECIDE_MAX_DECODED_BYTES} bytes`;

/**
 * An id experience continuity may record (it becomes an event and a read-model row): bounded,
 * and without NUL, which Postgres text cannot hold. Anything else is ignored, not refused:
 * the flags still answer.
 */
const storable = (id: string | undefined): string | undefined =>
  id !== undefined && id !== '' && id.length <= MAX_DECIDE_DISTINCT_ID_LENGTH && !id.includes('\0')
    ? id
    : undefined;

/** The token as flags.md §4.1 looks it up: query, then form, then body `$token`, `token`, `api_key`. */
function tokenOf(
  body: Record<string, unknown>,
  form: Record<string, string>,
  query: Record<string, string | undefined>,
): string | undefined {
  const candidates = [
    query.token,
    query.api_key,
    form.api_key,
    form.token,
    body.$token,
    body.token,
    body.api_key,
  ];
  const found = candidates.find((c) => typeof c === 'string' && c.trim() !== '');
  return typeof found === 'string' ? found.trim() : undefined;
}

export function parseDecideInput(
  payload: unknown,
  form: Record<string, string>,
  query: Record<string, string | undefined>,
): DecideInput | DecideFailure {
  if (!isRecord(payload)) return malformed('the payload is not a JSON object');
  const token = tokenOf(payload, form, query);
  if (token === undefined) return noApiKey();
  const distinctId = idString(payload.distinct_id);
  if (distinctId === undefined || distinctId.trim() === '')
    return refuse(
      validation('missing_distinct_id', 'Decide requires a distinct_id.', 'distinct_id'),
    );
  if (distinctId.length > MAX_DECIDE_DISTINCT_ID_LENGTH)
    return refuse(
      validation(
        'malformed_data',
        `distinct_id is longer than ${MAX_DECIDE_DISTINCT_ID_LENGTH} characters`,
        'distinct_id',
      ),
    );
  const tooMany = oversized(payload);
  if (tooMany) return refuse(validation('malformed_data', tooMany.detail, tooMany.attr));
  const keys = payload.flag_keys_to_evaluate;
  return {
    token,
    projectIdField: payload.project_id ?? query.project_id,
    distinctId,
    groups: stringMap(payload.groups),
    personProperties: isRecord(payload.person_properties) ? payload.person_properties : undefined,
    groupProperties: groupProps(payload.group_properties),
    anonDistinctId: storable(idString(payload.$anon_distinct_id)),
    deviceId: idString(payload.$device_id) ?? null,
    disableFlags: truthy(payload.disable_flags),
    geoipDisable: truthy(payload.geoip_disable),
    flagKeys: Array.isArray(keys)
      ? keys.filter((k): k is string => typeof k === 'string')
      : undefined,
  };
}
