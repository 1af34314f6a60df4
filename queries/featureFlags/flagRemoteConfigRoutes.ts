import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { featureFlagsReader } from '../../projections/featureFlags/featureFlagsReader.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, notFound } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { projectIdParam } from '../../src/http/params.ts';

const RemoteConfigParams = z.object({
  project_id: projectIdParam,
  id: z.string().min(1).max(400).describe("the flag's key, or its id (all digits)"),
});

const RemoteConfigQuery = z.object({
  token: z
    .string()
    .optional()
    .describe(
      'project API key: when given, the flag is looked up in its project (the key must reach it), whatever the path names',
    ),
  api_key: z.string().optional().describe('same as token'),
});

const RemoteConfigAnswer = z
  .string()
  .nullable()
  .describe(
    "the flag's `true` payload as it is stored (JSON text, so a JSON string on the wire), or null when it has none",
  );

/**
 * A flag's payload for server SDKs (posthog-python `get_remote_config_payload`, posthog-node
 * `getRemoteConfigPayload`): `GET /api/projects/@current/feature_flags/<key>/remote_config?token=…`
 * with a personal API key. PostHog answers `filters.payloads["true"]` or null; a flag here has no
 * `is_remote_configuration` marker nor encrypted payloads, so every live flag answers
 * (docs/DECISIONS.md "Remote config payloads").
 */
export const flagRemoteConfigRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const flags = featureFlagsReader(ctx.pool);
    app.get(
      '/api/projects/:project_id/feature_flags/:id/remote_config/',
      {
        // `projectFromToken`: PostHog takes the project of `?token=` over the path's (its routing
        // resolves the team from a token first), which is what `@current` means for an SDK.
        config: { scope: 'feature_flag:read', projectFromToken: true },
        schema: {
          tags: ['feature_flags'],
          summary: "A flag's remote config payload",
          params: RemoteConfigParams,
          querystring: RemoteConfigQuery,
          response: { 200: RemoteConfigAnswer, ...errorResponses },
        },
      },
      async (request, reply) => {
        const projectId = projectOf(request).id;
        const { id } = request.params;
        const flag = /^\d{1,10}$/.test(id)
          ? await flags.get(projectId, Number(id))
          : await flags.liveByKey(projectId, id);
        if (!flag || flag.deleted) fail(notFound());
        const payloads = flag.filters.payloads;
        const payload =
          typeof payloads === 'object' && payloads !== null
            ? (payloads as Record<string, unknown>).true
            : undefined;
        // Stored payloads are JSON text (PostHog's json.dumps); an empty one is none, as in PostHog.
        // The answer is that text as a JSON string: Fastify sends a string as it is, so it is
        // encoded here (the SDK decodes the body once and hands the text to the caller).
        const answer = typeof payload === 'string' && payload !== '' ? payload : null;
        return reply.type('application/json; charset=utf-8').send(JSON.stringify(answer));
      },
    );
  };
