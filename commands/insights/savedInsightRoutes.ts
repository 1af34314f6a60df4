import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { accessReader } from '../../projections/access/accessReader.ts';
import { insightsReader } from '../../projections/insights/insightsReader.ts';
import { checkFilters } from '../../queries/insights/savedInsightResult.ts';
import {
  creatorIds,
  SavedInsightView,
  toSavedInsightView,
} from '../../queries/insights/savedInsightView.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, invalidInput, notFound } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { principalOf, projectOf } from '../../src/http/apiScope.ts';
import { hardDeleteRefused } from '../../src/http/hardDeleteRefused.ts';
import { notFoundUnlessIntegerIds } from '../../src/http/integerIds.ts';
import { ProjectParams } from '../../src/http/params.ts';
import { requestMetadata } from '../../src/http/requestMetadata.ts';
import { createInsight, patchInsight } from './insightHandlers.ts';
import type { InsightFields } from './model/insight.ts';
import { filtersOfQuery } from './model/insightQuery.ts';

export const InsightParams = ProjectParams.extend({
  id: z.coerce.number().int().describe('insight id'),
});
const Json = z.record(z.string(), z.unknown());
const writable = {
  name: z.string().max(400).nullable().optional(),
  description: z.string().max(1000).optional(),
  filters: Json.optional().describe(
    'PostHog’s legacy insight filter, as insights/trend/ takes it (insight TRENDS, STICKINESS, LIFECYCLE computed; FUNNELS, RETENTION, PATHS stored)',
  ),
  query: Json.nullable()
    .optional()
    .describe(
      '{"kind": "InsightVizNode", "source": {"kind": "TrendsQuery" | "StickinessQuery" | "LifecycleQuery", …}}: wins over filters',
    ),
  saved: z.boolean().optional(),
  favorited: z.boolean().optional(),
  dashboards: z
    .array(z.number().int())
    .max(100)
    .optional()
    .describe('the dashboards it is on (tiles are made and removed to match)'),
  tags: z.array(z.unknown()).optional().describe('ignored: tags are not kept'),
};
const CreateBody = z.object(writable).meta({ id: 'SavedInsightCreate' });
const PatchBody = z
  .object({
    ...writable,
    deleted: z.boolean().optional().describe('true soft-deletes, false restores'),
  })
  .meta({ id: 'SavedInsightPatch' });

/** `filters` and `query` as stored: a query is mapped onto filters, or refused with why. */
function computedFields(body: {
  filters?: Record<string, unknown> | undefined;
  query?: Record<string, unknown> | null | undefined;
}): Pick<InsightFields, 'filters' | 'query'> | undefined {
  if (body.query) {
    const mapped = filtersOfQuery(body.query);
    if (!mapped.ok) fail(invalidInput(mapped.detail, 'query'));
    checkFilters(mapped.filters);
    return { filters: mapped.filters, query: body.query };
  }
  if (body.filters === undefined) return undefined;
  checkFilters(body.filters);
  return { filters: body.filters, query: null };
}

/**
 * The write side of saved insights (issue #28): create, patch (soft delete and restore too). The
 * retrieve, with `refresh`, is a read (queries/insights/savedInsightRetrieveRoutes.ts).
 */
export const savedInsightRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.addHook('preValidation', notFoundUnlessIntegerIds(['id']));
    const insights = insightsReader(ctx.pool);
    const users = accessReader(ctx.pool);
    const prefix = '/api/projects/:project_id/insights';
    const view = async (request: FastifyRequest, id: number, includeDeleted = false) => {
      const row =
        (await insights.get(projectOf(request).id, id, includeDeleted)) ?? fail(notFound());
      return toSavedInsightView(row, await users.usersById(creatorIds([row])));
    };
    const write = { scope: 'insight:write' };

    app.post(
      `${prefix}/`,
      {
        config: write,
        schema: {
          tags: ['insights'],
          params: ProjectParams,
          body: CreateBody,
          response: { 201: SavedInsightView, ...errorResponses },
        },
      },
      async (request, reply) => {
        const body = request.body;
        const computed =
          computedFields(body) ?? fail(invalidInput('filters or query is required.', 'filters'));
        const { insightId } = await createInsight(
          ctx,
          {
            projectId: projectOf(request).id,
            userId: principalOf(request).user.id,
            fields: {
              name: body.name ?? null,
              description: body.description ?? '',
              ...computed,
              saved: body.saved ?? false,
              favorited: body.favorited ?? false,
            },
            dashboards: body.dashboards ?? [],
          },
          requestMetadata(ctx, request),
        );
        return reply.status(201).send(await view(request, insightId));
      },
    );

    app.patch(
      `${prefix}/:id/`,
      {
        config: write,
        schema: {
          tags: ['insights'],
          params: InsightParams,
          body: PatchBody,
          response: { 200: SavedInsightView, ...errorResponses },
        },
      },
      async (request) => {
        const { dashboards, tags: _tags, filters, query, ...rest } = request.body;
        const computed = computedFields({ filters, query });
        // `query: null` on an insight saved as a query keeps its filters and drops the query
        const changes = {
          ...rest,
          ...(computed ?? (query === null ? { query: null } : {})),
        };
        await patchInsight(
          ctx,
          { insightId: request.params.id, projectId: projectOf(request).id, changes, dashboards },
          requestMetadata(ctx, request),
        );
        return view(request, request.params.id, rest.deleted === true);
      },
    );

    hardDeleteRefused(app, `${prefix}/:id/`, {
      scope: write.scope,
      tags: ['insights'],
      params: InsightParams,
      description: 'hard deletes are refused: PATCH {"deleted": true} soft-deletes',
    });
  };
