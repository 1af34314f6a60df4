import type { GeoIp } from '../../ingress/geoip.ts';
import type { RawCaptureRequest } from '../../ingress/requestContext.ts';
import { createProjectResolver, type ResolveProject } from '../../ingress/resolveProject.ts';
import type { AccessReader } from '../../projections/access/accessReader.ts';
import type {
  FlagDefinitions,
  ProjectFlags,
} from '../../projections/featureFlags/flagDefinitions.ts';
import type {
  FlagEvaluationRequest,
  FlagEvaluationService,
} from '../../projections/featureFlags/flagEvaluationService.ts';
import { type DomainError, throttled, unauthenticated } from '../../src/core/errors.ts';
import { type DecideInput, decodeDecideBody, parseDecideInput } from './decideRequest.ts';
import { type AnswerFormat, answerJson, type FlagMeta } from './decideResponse.ts';
import type { EvaluationThreads, Refusal } from './evaluationThreads.ts';

/** What a personal API key needs to ask for flags (flags.md §4.1: `phx_` + `project_id`). */
export const DECIDE_SCOPE = 'feature_flag:read';

/** The seven person properties a request's GeoIP overrides (api-spec rule 2). */
const GEOIP_OVERRIDES = [
  'city_name',
  'country_name',
  'country_code',
  'continent_name',
  'continent_code',
  'postal_code',
  'time_zone',
] as const;

export type DecideDeps = Readonly<{
  resolveProject: ResolveProject;
  evaluation: FlagEvaluationService;
  geoip: GeoIp;
  /** experience continuity: records hash key overrides for `$anon_distinct_id` (when set up) */
  continuity?: (projectId: number, input: DecideInput) => Promise<void>;
  /** evaluation threads (FLAG_EVALUATION_THREADS) and the definitions they are sent */
  threads?: { pool: EvaluationThreads; definitions: Pick<FlagDefinitions, 'forProject'> };
  /** a request's evaluation time (FLAG_EVALUATION_DEADLINE_MS) */
  deadlineMs: number;
}>;

/** FLAG_EVALUATION_DEADLINE_MS's default (src/config.ts) */
export const DEFAULT_FLAG_EVALUATION_DEADLINE_MS = 1_000;

export const decideDeps = (
  access: Pick<AccessReader, 'projectIdByApiKeyHash' | 'personalKeyByHash' | 'canReachProject'>,
  evaluation: FlagEvaluationService,
  geoip: GeoIp,
  continuity?: DecideDeps['continuity'],
  threads?: DecideDeps['threads'],
  deadlineMs = DEFAULT_FLAG_EVALUATION_DEADLINE_MS,
): DecideDeps => ({
  deadlineMs,
  resolveProject: createProjectResolver(access, 30_000, 1_000, DECIDE_SCOPE),
  evaluation,
  geoip,
  ...(continuity ? { continuity } : {}),
  ...(threads ? { threads } : {}),
});

/**
 * The answer as JSON text (see decideResponse.ts), or the refusal; `overloaded`: every
 * evaluation thread's queue is full (503 with Retry-After).
 */
export type DecideOutcome =
  | { ok: true; input: DecideInput; json: string }
  | { ok: false; error: DomainError }
  | { ok: false; overloaded: true };

/** v4's metadata by flag key, once per definitions version (rows are replaced on every change). */
const metaByRows = new WeakMap<readonly unknown[], ReadonlyMap<string, FlagMeta>>();
function metaOf(project: ProjectFlags): ReadonlyMap<string, FlagMeta> {
  let meta = metaByRows.get(project.rows);
  if (!meta) {
    meta = new Map(project.rows.map((r) => [r.key, r as unknown as FlagMeta]));
    metaByRows.set(project.rows, meta);
  }
  return meta;
}
const NO_FLAGS = { evaluations: [], errors: false, meta: new Map() } as const;

/** Token failures in /decide's words (flags.md §4.1): every personal key problem is one 401. */
function tokenError(error: DomainError): DomainError {
  if (error.code === 'invalid_api_key') return error;
  if (error.code === 'invalid_project') return error;
  return unauthenticated('invalid_personal_key', 'Invalid Personal API key.');
}

/** `$geoip_*` of the forwarded address, under the request's own person properties. */
function withGeoip(deps: DecideDeps, input: DecideInput, forwardedIp: string | null) {
  if (input.geoipDisable || !forwardedIp) return input.personProperties;
  const fields = deps.geoip.lookup(forwardedIp);
  if (!fields) return input.personProperties;
  const geo: Record<string, unknown> = {};
  for (const f of GEOIP_OVERRIDES) if (fields[f] !== undefined) geo[`$geoip_${f}`] = fields[f];
  return { ...geo, ...input.personProperties };
}

/**
 * /decide and /flags: decode → token → (continuity write) → evaluate (on an evaluation thread
 * when one can answer alone) → the answer in `format`.
 */
export async function decide(
  deps: DecideDeps,
  raw: RawCaptureRequest,
  forwardedIp: string | null,
  format: AnswerFormat,
): Promise<DecideOutcome> {
  const decoded = await decodeDecideBody(raw);
  if (!decoded.ok) return decoded;
  const input = parseDecideInput(decoded.payload, decoded.form, raw.query);
  if ('ok' in input) return input;
  const project = await deps.resolveProject(input.token, input.projectIdField);
  if (!project.ok) return { ok: false, error: tokenError(project.error) };
  if (input.disableFlags) return { ok: true, input, json: answerJson(format, NO_FLAGS) };
  // Continuity is best effort, as in PostHog: a failed write still answers the flags.
  if (input.anonDistinctId !== undefined && !input.distinctId.includes('\0') && deps.continuity)
    await deps.continuity(project.projectId, input).catch(() => undefined);
  const personProperties = withGeoip(deps, input, forwardedIp);
  const request: FlagEvaluationRequest = {
    deadlineMs: Date.now() + deps.deadlineMs,
    projectId: project.projectId,
    distinctId: input.distinctId,
    groups: input.groups,
    ...(personProperties ? { personProperties } : {}),
    ...(input.groupProperties ? { groupProperties: input.groupProperties } : {}),
    ...(input.flagKeys ? { keys: input.flagKeys } : {}),
    deviceId: input.deviceId,
  };
  if (deps.threads) {
    const json = await answerOnThreads(deps.threads, deps.evaluation, request, format);
    if (typeof json === 'string') return { ok: true, input, json };
    if (json !== null) return refusedOutcome(json);
  }
  const result = await deps.evaluation.evaluate(request);
  const answer = {
    evaluations: result.evaluations,
    errors: result.errors,
    meta: metaOf(result.project),
  };
  return { ok: true, input, json: answerJson(format, answer) };
}

const PROJECT_FULL = throttled(
  'This project has too many flag requests being evaluated at once; retry shortly.',
);
const refusedOutcome = (r: Refusal): DecideOutcome =>
  r.refused === 'project_full'
    ? { ok: false, error: PROJECT_FULL }
    : { ok: false, overloaded: true };

/**
 * The answer from an evaluation thread: the first pass there; when it needs stored data, the
 * main thread loads that (as the evaluation service would) and the thread runs the complete pass
 * with it. Null: the main thread answers itself (a thread down or busy, new definitions, a
 * failed load — the service then loads again and leaves undecided flags out, as it always does).
 */
async function answerOnThreads(
  threads: NonNullable<DecideDeps['threads']>,
  evaluation: FlagEvaluationService,
  request: FlagEvaluationRequest,
  format: AnswerFormat,
): Promise<string | Refusal | null> {
  const definitions = await threads.definitions.forProject(request.projectId);
  const first = await threads.pool.answer(definitions, request, format);
  if (first === null || typeof first === 'string' || 'refused' in first) return first;
  const stored = await evaluation.loadStored(request, definitions, first.needs).catch(() => null);
  if (!stored) return null;
  const second = await threads.pool.answer(definitions, request, format, {
    stored,
    nowMs: first.nowMs,
  });
  return typeof second === 'string' || (second !== null && 'refused' in second) ? second : null;
}
