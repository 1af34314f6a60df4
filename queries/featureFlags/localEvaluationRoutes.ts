import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { cohortsReader } from '../../projections/cohorts/cohortsReader.ts';
import { featureFlagsReader } from '../../projections/featureFlags/featureFlagsReader.ts';
import { personsReader } from '../../projections/persons/personsReader.ts';
import type { AppContext } from '../../src/appContext.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { ProjectParams } from '../../src/http/params.ts';
import {
  type DefinitionsSource,
  LocalEvaluationAnswer,
  LocalEvaluationQuery,
  localEvaluationAnswer,
  notModified,
} from './localEvaluation.ts';

/**
 * Flag definitions for server SDKs that evaluate locally (flags.md §5): posthog-node ≤ 5.29.3
 * polls `/api/feature_flag/local_evaluation`, later releases `/flags/definitions`, both with
 * `?token=<project API key>&send_cohorts` and a personal API key; the project-scoped URL is the
 * REST one. One answer for all three, with an ETag so unchanged polls are 304s. These routes live
 * in the `/api` scope (personal key and scope checked there), `/flags/definitions` included.
 */
export const localEvaluationRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const flags = featureFlagsReader(ctx.pool);
    const persons = personsReader(ctx.pool);
    const cohorts = cohortsReader(ctx.pool);
    // The one place that says where definitions come from: the in-memory definitions cache can
    // replace these two reads without touching the answer.
    const definitionsOf = async (projectId: number): Promise<DefinitionsSource> => {
      const [rows, types, cohortDefinitions] = await Promise.all([
        flags.definitions(projectId),
        persons.groupTypes(projectId),
        cohorts.definitions(projectId),
      ]);
      return {
        flags: rows,
        cohorts: cohortDefinitions,
        groupTypeMapping: Object.fromEntries(
          types.map((t) => [String(t.group_type_index), t.group_type]),
        ),
      };
    };
    const response = {
      200: LocalEvaluationAnswer,
      304: z.null().describe('Not modified: the `If-None-Match` ETag is current (no body)'),
      ...errorResponses,
    };
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const sendCohorts = (request.query as { send_cohorts?: string }).send_cohorts !== undefined;
      const { answer, etag } = localEvaluationAnswer(
        await definitionsOf(projectOf(request).id),
        sendCohorts,
      );
      reply.header('etag', etag).header('cache-control', 'private, no-cache');
      if (notModified(request.headers['if-none-match'], etag)) return reply.code(304).send();
      return answer;
    };
    const byToken = { scope: 'feature_flag:read', projectFromToken: true };
    for (const url of ['/api/feature_flag/local_evaluation', '/flags/definitions']) {
      app.get(
        url,
        {
          config: byToken,
          schema: { tags: ['feature_flags'], querystring: LocalEvaluationQuery, response },
        },
        handler,
      );
    }
    app.get(
      '/api/projects/:project_id/feature_flags/local_evaluation/',
      {
        config: { scope: 'feature_flag:read' },
        schema: {
          tags: ['feature_flags'],
          params: ProjectParams,
          querystring: LocalEvaluationQuery,
          response,
        },
      },
      handler,
    );
  };
