import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { loadFlagEditor } from '../../commands/featureFlags/model/canEditFlag.ts';
import { flagValue } from '../../projections/featureFlags/evaluation/types.ts';
import type { FlagEvaluationService } from '../../projections/featureFlags/flagEvaluationService.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { principalOf, projectOf } from '../../src/http/apiScope.ts';
import { ProjectParams } from '../../src/http/params.ts';
import { flagReaders, toFlagViews } from './featureFlagQueries.ts';
import { FlagView } from './flagView.ts';

const Value = z.union([z.boolean(), z.string()]);
const ReasonsQuery = z.object({
  distinct_id: z.string().min(1).max(1000).describe('whose flags to evaluate'),
  groups: z.string().optional().describe('JSON object: group type → group key'),
});
const Reasons = z
  .record(
    z.string(),
    z.object({
      value: Value,
      evaluation: z.object({
        reason: z.string().describe('condition_match, no_condition_match, out_of_rollout_bound, …'),
        condition_index: z.number().int().nullable(),
      }),
    }),
  )
  .describe('every flag that could be evaluated, by key');

function parseGroups(text: string | undefined): Record<string, string> {
  if (text === undefined || text === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    fail(invalidInput('groups must be a JSON object of group type → group key.', 'groups'));
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    fail(invalidInput('groups must be a JSON object of group type → group key.', 'groups'));
  return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, String(v)]));
}

/**
 * The flag action endpoints on top of server-side evaluation (issue #9): evaluation reasons for a
 * distinct id, and the calling user's own flags (the user's `distinct_id`, as PostHog does).
 */
export const flagActionRoutes =
  (ctx: AppContext, evaluation: FlagEvaluationService): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const readers = flagReaders(ctx.pool);
    const prefix = '/api/projects/:project_id/feature_flags';
    const read = { scope: 'feature_flag:read' };
    const evaluate = (request: FastifyRequest, distinctId: string, groups = {}) =>
      evaluation.evaluate({ projectId: projectOf(request).id, distinctId, groups });

    app.get(
      `${prefix}/evaluation_reasons/`,
      {
        config: read,
        schema: {
          tags: ['feature_flags'],
          summary: 'Every flag’s value and reason for one distinct id',
          params: ProjectParams,
          querystring: ReasonsQuery,
          response: { 200: Reasons, ...errorResponses },
        },
      },
      async (request) => {
        const groups = parseGroups(request.query.groups);
        const { evaluations } = await evaluate(request, request.query.distinct_id, groups);
        const out: z.infer<typeof Reasons> = {};
        for (const e of evaluations) {
          if (e.outcome !== 'evaluated') continue;
          out[e.key] = {
            value: flagValue(e)!,
            evaluation: { reason: e.reason.code, condition_index: e.reason.condition_index },
          };
        }
        return out;
      },
    );

    app.get(
      `${prefix}/my_flags/`,
      {
        config: read,
        schema: {
          tags: ['feature_flags'],
          summary: 'The project’s flags evaluated for the calling user (by the user’s distinct_id)',
          params: ProjectParams,
          response: {
            200: z.array(z.object({ feature_flag: FlagView, value: Value })),
            ...errorResponses,
          },
        },
      },
      async (request) => {
        const user = principalOf(request).user;
        const { project, evaluations } = await evaluate(request, user.distinct_id);
        const values = new Map(evaluations.map((e) => [e.key, flagValue(e)]));
        const editor = await loadFlagEditor(readers.access, user.id, projectOf(request).level);
        const rows = project.rows.filter((r) => values.get(r.key) !== undefined);
        const views = await toFlagViews(readers, rows, editor);
        return views.map((v) => ({ feature_flag: v, value: values.get(v.key)! }));
      },
    );
  };
