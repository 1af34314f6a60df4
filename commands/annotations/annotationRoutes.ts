import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { annotationsReader } from '../../projections/annotations/annotationsReader.ts';
import { AnnotationParams } from '../../queries/annotations/annotationQueryRoutes.ts';
import { AnnotationView } from '../../queries/annotations/annotationView.ts';
import { annotationViews } from '../../queries/annotations/annotationViews.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, notFound } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { principalOf, projectOf } from '../../src/http/apiScope.ts';
import { hardDeleteRefused } from '../../src/http/hardDeleteRefused.ts';
import { notFoundUnlessIntegerIds } from '../../src/http/integerIds.ts';
import { ProjectParams } from '../../src/http/params.ts';
import { requestMetadata } from '../../src/http/requestMetadata.ts';
import { annotationDeps } from './annotationDeps.ts';
import { createAnnotation } from './createAnnotation.ts';
import { ANNOTATION_SCOPES, type AnnotationFields, CREATION_TYPES } from './model/annotation.ts';
import { patchAnnotation } from './patchAnnotation.ts';

// A moment as DRF's DateTimeField reads it (an offset, or UTC without one), kept as ISO 8601 UTC.
const DateMarker = z
  .union([z.iso.datetime({ offset: true, local: true }), z.iso.date()], {
    error: 'date_marker must be an ISO 8601 date and time',
  })
  .transform((s) =>
    new Date(/(Z|[+-]\d\d:?\d\d)$/i.test(s) || !s.includes('T') ? s : `${s}Z`).toISOString(),
  );
const id = z.number().int().min(1).max(2147483647);

// The writable fields of PostHog's serializer; read-only ones sent back (id, created_by…) are dropped.
const writable = {
  content: z.string().max(400).nullable(),
  date_marker: DateMarker.nullable(),
  scope: z.enum(ANNOTATION_SCOPES),
  creation_type: z.enum(CREATION_TYPES),
  dashboard_item: id.nullable().describe('the insight an insight-scoped annotation belongs to'),
  dashboard_id: id.nullable().describe('a dashboard of the project'),
  is_emoji: z.boolean().describe('content is one emoji'),
};
const CreateAnnotationBody = z
  .object({
    content: writable.content.optional(),
    date_marker: writable.date_marker.optional(),
    scope: writable.scope
      .default('dashboard_item')
      .describe('default `dashboard_item`, as PostHog'),
    creation_type: writable.creation_type.default('USR'),
    dashboard_item: writable.dashboard_item.optional(),
    dashboard_id: writable.dashboard_id.optional(),
    is_emoji: writable.is_emoji.default(false),
  })
  .meta({ id: 'AnnotationCreate' });
const PatchAnnotationBody = z
  .object({
    content: writable.content.optional(),
    date_marker: writable.date_marker.optional(),
    scope: writable.scope.optional(),
    creation_type: writable.creation_type.optional(),
    dashboard_item: writable.dashboard_item.optional(),
    dashboard_id: writable.dashboard_id.optional(),
    is_emoji: writable.is_emoji.optional(),
    deleted: z.boolean().optional().describe('true soft-deletes; false restores a deleted one'),
  })
  .meta({ id: 'AnnotationPatch' });

/** Write side of annotations: parse → handler → the annotation as the read model shows it. */
export const annotationCommandRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.addHook('preValidation', notFoundUnlessIntegerIds(['id']));
    const deps = annotationDeps(ctx);
    const annotations = annotationsReader(ctx.pool);
    const prefix = '/api/projects/:project_id/annotations';
    const tags = ['annotations'];
    const write = { scope: 'annotation:write' };
    const view = async (request: FastifyRequest, annotationId: number) => {
      const projectId = projectOf(request).id;
      const row = await annotations.get(projectId, annotationId, true);
      if (!row) fail(notFound());
      return (await annotationViews(ctx.pool, projectId, [row]))[0]!;
    };

    app.post(
      `${prefix}/`,
      {
        config: write,
        schema: {
          tags,
          params: ProjectParams,
          body: CreateAnnotationBody,
          response: { 201: AnnotationView, ...errorResponses },
        },
      },
      async (request, reply) => {
        const b = request.body;
        const fields: AnnotationFields = {
          content: b.content ?? null,
          date_marker: b.date_marker ?? null,
          scope: b.scope,
          creation_type: b.creation_type,
          dashboard_item: b.dashboard_item ?? null,
          dashboard_id: b.dashboard_id ?? null,
          is_emoji: b.is_emoji,
        };
        const { annotationId } = await createAnnotation(
          deps,
          { projectId: projectOf(request).id, userId: principalOf(request).user.id, fields },
          requestMetadata(ctx, request),
        );
        return reply.status(201).send(await view(request, annotationId));
      },
    );

    app.patch(
      `${prefix}/:id/`,
      {
        config: write,
        schema: {
          tags,
          params: AnnotationParams,
          body: PatchAnnotationBody,
          response: { 200: AnnotationView, ...errorResponses },
        },
      },
      async (request) => {
        await patchAnnotation(
          deps,
          {
            annotationId: request.params.id,
            projectId: projectOf(request).id,
            changes: request.body,
          },
          requestMetadata(ctx, request),
        );
        return view(request, request.params.id);
      },
    );

    hardDeleteRefused(app, `${prefix}/:id/`, {
      scope: write.scope,
      tags,
      params: AnnotationParams,
      description: 'hard deletes are refused, as PostHog: PATCH {"deleted": true} soft-deletes',
    });
  };
