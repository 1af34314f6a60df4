import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ANNOTATION_SCOPES } from '../../commands/annotations/model/annotation.ts';
import { accessReader } from '../../projections/access/accessReader.ts';
import { annotationsProjection } from '../../projections/annotations/annotationsProjection.ts';
import { annotationsReader } from '../../projections/annotations/annotationsReader.ts';
import { type AppContext, awaitNewest } from '../../src/appContext.ts';
import { fail, invalidInput, notFound } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { notFoundUnlessIntegerIds } from '../../src/http/integerIds.ts';
import { pageAnswer, paginated } from '../../src/http/pagination.ts';
import { ProjectParams } from '../../src/http/params.ts';
import { activityPageSchema, activityRoutes } from '../shared/activityRoutes.ts';
import {
  AnnotationActivityEntry,
  allAnnotationsActivity,
  annotationActivity,
} from './annotationActivity.ts';
import { AnnotationView } from './annotationView.ts';
import { annotationViews } from './annotationViews.ts';

export const AnnotationParams = ProjectParams.extend({
  id: z.coerce.number().int().describe('annotation id'),
});

/** PostHog's page size for annotations (AnnotationsLimitOffsetPagination.default_limit). */
export const ANNOTATIONS_DEFAULT_LIMIT = 1000;
/** PostHog sets no maximum; 10,000 bounds one answer, as the events list's maximum. */
export const ANNOTATIONS_MAX_LIMIT = 10_000;

// An instant as Python's `datetime.fromisoformat` reads it; without an offset it is UTC.
const isoInstant = (name: string) =>
  z
    .union([z.iso.datetime({ offset: true, local: true }), z.iso.date()], {
      error: `Invalid date range: ${name} must be a valid ISO 8601 date`,
    })
    .transform((s) => new Date(/(Z|[+-]\d\d:?\d\d)$/i.test(s) || !s.includes('T') ? s : `${s}Z`));

const AnnotationListQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(ANNOTATIONS_MAX_LIMIT)
    .default(ANNOTATIONS_DEFAULT_LIMIT)
    .describe(`page size (default ${ANNOTATIONS_DEFAULT_LIMIT}, at most ${ANNOTATIONS_MAX_LIMIT})`),
  offset: z.coerce.number().int().min(0).default(0).describe('results to skip'),
  search: z
    .string()
    .max(400)
    .optional()
    .describe('words (space or comma separated) that must all appear in the content, any case'),
  scope: z
    .enum([...ANNOTATION_SCOPES, 'insight'], { error: 'Invalid scope' })
    .optional()
    .describe('`insight` is read as `dashboard_item`, as PostHog does'),
  date_from: isoInstant('date_from').optional().describe('date_marker at or after (ISO 8601)'),
  date_to: isoInstant('date_to').optional().describe('date_marker at or before (ISO 8601)'),
  is_emoji: z
    .string()
    .transform((v) => ['true', '1', 'yes'].includes(v.toLowerCase()))
    .optional()
    .describe('true, 1 or yes: only emoji annotations; anything else: only the others'),
});

/** Read side of annotations: the list (newest marker first, deleted hidden), one, activity. */
export const annotationQueryRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.addHook('preValidation', notFoundUnlessIntegerIds(['id']));
    const annotations = annotationsReader(ctx.pool);
    const caughtUp = () => awaitNewest(ctx, annotationsProjection.filter, annotationsProjection);
    const read = { scope: 'annotation:read' };
    const tags = ['annotations'];

    app.get(
      '/api/projects/:project_id/annotations/',
      {
        config: read,
        schema: {
          tags,
          params: ProjectParams,
          querystring: AnnotationListQuery,
          response: { 200: paginated(AnnotationView), ...errorResponses },
        },
      },
      async (request) => {
        const q = request.query;
        if (q.date_from && q.date_to && q.date_from > q.date_to)
          fail(invalidInput('Invalid date range: date_from must be before date_to', 'date_from'));
        await caughtUp();
        const projectId = projectOf(request).id;
        const page = await annotations.list(
          projectId,
          {
            search: q.search
              ?.replaceAll('\0', '')
              .replaceAll(',', ' ')
              .split(/\s+/)
              .filter(Boolean),
            scope: q.scope === 'insight' ? 'dashboard_item' : q.scope,
            dateFrom: q.date_from,
            dateTo: q.date_to,
            isEmoji: q.is_emoji,
          },
          q,
        );
        return pageAnswer(request, q, {
          count: page.count,
          results: await annotationViews(ctx.pool, projectId, page.rows),
        });
      },
    );

    app.get(
      '/api/projects/:project_id/annotations/:id/',
      {
        config: read,
        schema: {
          tags,
          params: AnnotationParams,
          response: { 200: AnnotationView, ...errorResponses },
        },
      },
      async (request) => {
        await caughtUp();
        const projectId = projectOf(request).id;
        const row = await annotations.get(projectId, request.params.id);
        if (!row) fail(notFound());
        const [view] = await annotationViews(ctx.pool, projectId, [row]);
        return view!;
      },
    );

    activityRoutes(app, {
      path: '/api/projects/:project_id/annotations',
      tags,
      params: AnnotationParams,
      page: activityPageSchema(AnnotationActivityEntry, 'AnnotationActivityPage'),
      store: ctx.store,
      users: accessReader(ctx.pool),
      readers: { one: annotationActivity, all: allAnnotationsActivity },
    });
  };
