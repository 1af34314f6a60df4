import { randomUUID } from 'node:crypto';
import type { FlagEvaluation } from '../../projections/featureFlags/evaluation/types.ts';

/** The flag rows' fields the v4 `metadata` shows. */
export type FlagMeta = { id: number; name: string; revision?: unknown };

export type DecideAnswer = {
  evaluations: readonly FlagEvaluation[];
  errors: boolean;
  meta: ReadonlyMap<string, FlagMeta>;
};

/**
 * What posthog-js reads beside the flags (flags.md §4.2): every product this server does not run
 * (recordings, surveys, heatmaps, site apps, exception capture) is off, so the client loads no
 * extra script and sends nothing it cannot take.
 */
export const CLIENT_CONFIG = {
  config: { enable_collect_everything: true },
  editorParams: {},
  toolbarParams: {},
  isAuthenticated: false,
  supportedCompression: ['gzip', 'gzip-js', 'lz64'],
  sessionRecording: false,
  capturePerformance: false,
  autocapture_opt_out: false,
  autocaptureExceptions: false,
  captureDeadClicks: false,
  surveys: false,
  heatmaps: false,
  siteApps: [],
  elementsChainAsString: true,
  defaultIdentifiedOnly: true,
  flagsPersistenceDefault: false,
} as const;

/*
 * The answers are written as JSON text directly: this is the hottest read path, and building an
 * object of 50 dynamic keys only to stringify it cost more than the evaluation of a flag (see
 * docs/PERFORMANCE.md "bench:decide"). The field order is the one the objects had.
 */
const CONFIG_FIELDS = JSON.stringify(CLIENT_CONFIG).slice(1, -1);
const ERRORS_TRUE = '"errorsWhileComputingFlags":true,"errorComputingFlags":true';
const ERRORS_FALSE = '"errorsWhileComputingFlags":false,"errorComputingFlags":false';
const errorFields = (a: DecideAnswer) => (a.errors ? ERRORS_TRUE : ERRORS_FALSE);
// Flag keys, variants and payloads repeat on every answer: quoted once (a bounded memo of short
// strings: at most 20,000 of at most 1 KiB; a longer payload is quoted each time).
const quotedMemo = new Map<string, string>();
function str(s: string): string {
  if (s.length > 1024) return JSON.stringify(s);
  let quoted = quotedMemo.get(s);
  if (quoted === undefined) {
    if (quotedMemo.size >= 20_000) quotedMemo.clear();
    quoted = JSON.stringify(s);
    quotedMemo.set(s, quoted);
  }
  return quoted;
}

/** v1: the keys of the flags that are on. */
export function decideV1(a: DecideAnswer): string {
  let keys = '';
  for (const e of a.evaluations)
    if (e.outcome === 'evaluated' && e.enabled) keys += (keys ? ',' : '') + str(e.key);
  return `{${CONFIG_FIELDS},"featureFlags":[${keys}],${errorFields(a)}}`;
}

/** v2: `{key: true | variant}` for the flags that are on. */
export function decideV2(a: DecideAnswer): string {
  let flags = '';
  for (const e of a.evaluations) {
    if (e.outcome !== 'evaluated' || !e.enabled) continue;
    flags += `${flags ? ',' : ''}${str(e.key)}:${e.variant === null ? 'true' : str(e.variant)}`;
  }
  return `{${CONFIG_FIELDS},"featureFlags":{${flags}},${errorFields(a)}}`;
}

/** v3 (the contract): every flag, false included, and the matched value's payload as JSON text. */
export function decideV3(a: DecideAnswer): string {
  let flags = '';
  let payloads = '';
  for (const e of a.evaluations) {
    if (e.outcome !== 'evaluated') continue;
    const key = str(e.key);
    const value = !e.enabled ? 'false' : e.variant === null ? 'true' : str(e.variant);
    flags += `${flags ? ',' : ''}${key}:${value}`;
    if (e.enabled && e.payload !== null)
      payloads += `${payloads ? ',' : ''}${key}:${str(e.payload)}`;
  }
  return `{${CONFIG_FIELDS},"featureFlags":{${flags}},"featureFlagPayloads":{${payloads}},${errorFields(a)}}`;
}

/** v4 and /flags: `flags{}` with reason and metadata. */
export function flagsV4(a: DecideAnswer, withConfig: boolean): string {
  let flags = '';
  for (const e of a.evaluations) {
    if (e.outcome !== 'evaluated') continue;
    const meta = a.meta.get(e.key);
    const detail = {
      key: e.key,
      enabled: e.enabled,
      variant: e.variant,
      reason: e.reason,
      metadata: {
        id: meta?.id ?? 0,
        version: versionOf(meta),
        payload: e.payload,
        description: meta?.name ?? null,
      },
    };
    flags += `${flags ? ',' : ''}${str(e.key)}:${JSON.stringify(detail)}`;
  }
  const config = withConfig ? `${CONFIG_FIELDS},` : '';
  return `{${config}"flags":{${flags}},${errorFields(a)},"requestId":"${randomUUID()}"}`;
}

/** PostHog's flag version counts saves from 1; the stream revision counts events from 0. */
function versionOf(meta: FlagMeta | undefined): number {
  const revision = Number(meta?.revision ?? 0);
  return Number.isFinite(revision) ? revision + 1 : 1;
}

/** Which answer a request gets: /flags (v4 shape, config on request) or /decide v1…4. */
export type AnswerFormat = { readonly version: 1 | 2 | 3 | 4; readonly withConfig: boolean };

/** flags.md §4.1: missing → 1, a non-integer → 2; above 4 answers like 4. */
export function decideVersion(v: string | undefined): 1 | 2 | 3 | 4 {
  if (v === undefined || v === '') return 1;
  if (!/^-?\d+$/.test(v.trim())) return 2;
  return Math.min(Math.max(Number(v), 1), 4) as 1 | 2 | 3 | 4;
}

export function answerFormat(
  path: '/decide' | '/flags',
  query: Readonly<Record<string, string | undefined>>,
): AnswerFormat {
  if (path === '/flags')
    return { version: 4, withConfig: query.config === 'true' || query.config === '1' };
  return { version: decideVersion(query.v), withConfig: true };
}

export function answerJson(format: AnswerFormat, a: DecideAnswer): string {
  switch (format.version) {
    case 1:
      return decideV1(a);
    case 2:
      return decideV2(a);
    case 3:
      return decideV3(a);
    default:
      return flagsV4(a, format.withConfig);
  }
}
