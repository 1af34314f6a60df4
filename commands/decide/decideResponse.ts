import { randomUUID } from 'node:crypto';
import type { FlagEvaluation } from '../featureFlags/model/evaluation/types.ts';

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

type Evaluated = Extract<FlagEvaluation, { outcome: 'evaluated' }>;
const evaluatedOf = (a: DecideAnswer) =>
  a.evaluations.filter((e): e is Evaluated => e.outcome === 'evaluated');

const errorFields = (a: DecideAnswer) => ({
  errorsWhileComputingFlags: a.errors,
  errorComputingFlags: a.errors,
});

/** v1: the keys of the flags that are on. */
export function decideV1(a: DecideAnswer) {
  return {
    ...CLIENT_CONFIG,
    featureFlags: evaluatedOf(a)
      .filter((e) => e.enabled)
      .map((e) => e.key),
    ...errorFields(a),
  };
}

/** v2: `{key: true | variant}` for the flags that are on. */
export function decideV2(a: DecideAnswer) {
  const featureFlags: Record<string, string | boolean> = {};
  for (const e of evaluatedOf(a)) if (e.enabled) featureFlags[e.key] = e.variant ?? true;
  return { ...CLIENT_CONFIG, featureFlags, ...errorFields(a) };
}

/** v3 (the contract): every flag, false included, and the matched value's payload as JSON text. */
export function decideV3(a: DecideAnswer) {
  const featureFlags: Record<string, string | boolean> = {};
  const featureFlagPayloads: Record<string, string> = {};
  for (const e of evaluatedOf(a)) {
    featureFlags[e.key] = e.enabled ? (e.variant ?? true) : false;
    if (e.enabled && e.payload !== null) featureFlagPayloads[e.key] = e.payload;
  }
  return { ...CLIENT_CONFIG, featureFlags, featureFlagPayloads, ...errorFields(a) };
}

/** v4 and /flags: `flags{}` with reason and metadata. */
export function flagsV4(a: DecideAnswer, withConfig: boolean) {
  const flags: Record<string, unknown> = {};
  for (const e of evaluatedOf(a)) {
    const meta = a.meta.get(e.key);
    flags[e.key] = {
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
  }
  return {
    ...(withConfig ? CLIENT_CONFIG : {}),
    flags,
    ...errorFields(a),
    requestId: randomUUID(),
  };
}

/** PostHog's flag version counts saves from 1; the stream revision counts events from 0. */
function versionOf(meta: FlagMeta | undefined): number {
  const revision = Number(meta?.revision ?? 0);
  return Number.isFinite(revision) ? revision + 1 : 1;
}
