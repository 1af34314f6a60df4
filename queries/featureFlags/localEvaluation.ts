import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { FlagDefinitionRow } from '../../projections/featureFlags/featureFlagsReader.ts';

/**
 * One flag of the local-evaluation answer, in PostHog's `MinimalFeatureFlagSerializer` shape
 * plus the fields newer servers send (flags.md §1.1). `bucketing_identifier` is left out: flags
 * here have none, and posthog-node 5 buckets by distinct id when it is absent.
 */
export const LocalEvaluationFlag = z.object({
  id: z.number().int(),
  team_id: z.number().int(),
  name: z.string(),
  key: z.string(),
  filters: z.record(z.string(), z.unknown()),
  deleted: z.boolean(),
  active: z.boolean(),
  ensure_experience_continuity: z.boolean(),
  has_encrypted_payloads: z.boolean(),
  version: z
    .number()
    .int()
    .describe("1 at creation, then one more per change to the flag's stream"),
  evaluation_runtime: z.enum(['all', 'server', 'client']),
  evaluation_tags: z.array(z.string()),
});
export type LocalEvaluationFlag = z.infer<typeof LocalEvaluationFlag>;

export const LocalEvaluationAnswer = z.object({
  flags: z.array(LocalEvaluationFlag),
  group_type_mapping: z
    .record(z.string(), z.string())
    .describe('group type index (as a string) → group type name'),
  cohorts: z
    .record(z.string(), z.unknown())
    .describe('cohort id → property group (with `send_cohorts`; dynamic cohorts only)'),
});
export type LocalEvaluationAnswer = z.infer<typeof LocalEvaluationAnswer>;

export const LocalEvaluationQuery = z.object({
  token: z.string().optional().describe('project API key (the project of the unscoped URLs)'),
  api_key: z.string().optional().describe('same as token'),
  send_cohorts: z
    .string()
    .optional()
    .describe('present: send the cohort definitions the flags may reference'),
});

/** What the answer is built from: the flags read model today, the in-memory definitions cache later. */
export type DefinitionsSource = Readonly<{
  flags: readonly FlagDefinitionRow[];
  groupTypeMapping: Readonly<Record<string, string>>;
  cohorts: Readonly<Record<string, unknown>>;
}>;

export const toLocalEvaluationFlag = (row: FlagDefinitionRow): LocalEvaluationFlag => ({
  id: row.id,
  team_id: row.project_id,
  name: row.name,
  key: row.key,
  filters: row.filters,
  deleted: row.deleted,
  active: row.active,
  ensure_experience_continuity: row.ensure_experience_continuity,
  has_encrypted_payloads: false,
  version: row.revision + 1,
  evaluation_runtime: 'all',
  evaluation_tags: [],
});

/**
 * The answer with its strong ETag (a hash of its JSON text), so a poll that changes nothing is
 * a 304. `cohorts` holds the project's dynamic cohorts with `send_cohorts`, else `{}`: a flag
 * that references a cohort is then inconclusive in the SDK, which asks the server
 * (docs/DECISIONS.md).
 */
export function localEvaluationAnswer(
  source: DefinitionsSource,
  sendCohorts = false,
): {
  answer: LocalEvaluationAnswer;
  etag: string;
} {
  const answer: LocalEvaluationAnswer = {
    flags: source.flags.map(toLocalEvaluationFlag),
    group_type_mapping: { ...source.groupTypeMapping },
    cohorts: sendCohorts ? { ...source.cohorts } : {},
  };
  const json = JSON.stringify(answer);
  return {
    answer,
    etag: `"${createHash('sha256').update(json).digest('base64url').slice(0, 32)}"`,
  };
}

/** Whether `If-None-Match` names the current ETag (a list, `*`, and weak forms compare weakly, RFC 9110). */
export function notModified(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const bare = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || bare(tag) === bare(etag));
}
