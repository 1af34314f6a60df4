import { setImmediate as nextTurn } from 'node:timers/promises';
import { getMultipartBoundary, parseMultipart } from '@remix-run/multipart-parser';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { cohortsReader } from '../../projections/cohorts/cohortsReader.ts';
import type { FlagDefinitions } from '../../projections/featureFlags/flagDefinitions.ts';
import { personBatchesReader } from '../../projections/persons/personBatchesReader.ts';
import { CohortParams } from '../../queries/cohorts/cohortQueryRoutes.ts';
import { CohortView, toCohortView } from '../../queries/cohorts/cohortView.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, invalidInput, notFound, required } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { principalOf, projectOf } from '../../src/http/apiScope.ts';
import { hardDeleteRefused } from '../../src/http/hardDeleteRefused.ts';
import { notFoundUnlessIntegerIds } from '../../src/http/integerIds.ts';
import { ProjectParams } from '../../src/http/params.ts';
import { requestMetadata } from '../../src/http/requestMetadata.ts';
import { cohortDeps } from './cohortDeps.ts';
import { createCohort } from './createCohort.ts';
import { createStaticCohortForFlag } from './createStaticCohortForFlag.ts';
import { filtersOfGroups, LegacyGroups } from './legacyGroups.ts';
import { CohortFiltersInput } from './model/cohortFilters.ts';
import { patchCohort } from './patchCohort.ts';
import { addToStaticCohort, createStaticCohort, distinctIdsOfCsv } from './staticCohorts.ts';

const writable = {
  name: z.string().max(400),
  description: z.string().max(1000).optional(),
  filters: CohortFiltersInput,
  is_static: z
    .union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')])
    .optional()
    .describe(
      'a fixed set of persons (from `csv`, or create_static_cohort_for_flag) instead of filters',
    ),
  groups: LegacyGroups.optional(),
  csv: z
    .string()
    .optional()
    .describe(
      'static cohorts, multipart/form-data only: a CSV file whose first column holds distinct ids (a `distinct_id` header is skipped)',
    ),
};
const CreateCohortBody = z
  .object({ ...writable, filters: writable.filters.optional() })
  .meta({ id: 'CohortCreate' })
  .describe('JSON, or multipart/form-data with the same fields and a `csv` file');
const PatchCohortBody = z
  .object({
    name: writable.name.optional(),
    description: writable.description,
    filters: writable.filters.optional(),
    is_static: writable.is_static,
    groups: writable.groups,
    csv: writable.csv.describe('static cohorts, multipart/form-data: more distinct ids to add'),
    deleted: z.boolean().optional().describe('true soft-deletes the cohort'),
  })
  .meta({ id: 'CohortPatch' });

/** The most persons `create_static_cohort_for_flag` evaluates (a project past it gets a 413). */
export const MAX_PERSONS_FOR_FLAG_COHORT = 100_000;

/** Largest multipart body (a CSV of distinct ids) the cohort routes take. */
export const COHORT_CSV_MAX_BYTES = 10 * 1024 * 1024;
const EMPTY_FILTERS = { properties: { type: 'AND' as const, values: [] } };

/**
 * PostHog reads a cohort's deprecated `groups` only when it has no `filters`: so here, converted
 * to the equivalent filters (an empty list means none).
 */
const legacyFilters = (groups: z.infer<typeof LegacyGroups> | undefined) =>
  groups !== undefined && groups.length > 0 ? filtersOfGroups(groups) : undefined;

/** Bytes of a multipart field decoded between two turns of the event loop (a few ms each). */
const DECODE_CHUNK_BYTES = 256 * 1024;

/** UTF-8 text of a (possibly megabytes large) field, decoded in chunks that yield in between. */
async function textOf(bytes: Uint8Array): Promise<string> {
  if (bytes.length <= DECODE_CHUNK_BYTES) return new TextDecoder().decode(bytes);
  const decoder = new TextDecoder();
  const pieces: string[] = [];
  for (let at = 0; at < bytes.length; at += DECODE_CHUNK_BYTES) {
    pieces.push(decoder.decode(bytes.subarray(at, at + DECODE_CHUNK_BYTES), { stream: true }));
    await nextTurn();
  }
  pieces.push(decoder.decode());
  return pieces.join('');
}

/** A multipart/form-data body as `{field: text}` (files as their text). */
async function formFields(
  contentType: string | undefined,
  body: Buffer,
): Promise<Record<string, string>> {
  const boundary = getMultipartBoundary(contentType ?? '');
  if (!boundary) fail(invalidInput('multipart/form-data without a boundary.'));
  const parts: { name: string; bytes: Uint8Array }[] = [];
  try {
    const limit = body.length + 1;
    for (const part of parseMultipart(body, { boundary, maxFileSize: limit, maxTotalSize: limit }))
      if (part.name !== undefined) parts.push({ name: part.name, bytes: part.bytes });
  } catch (error) {
    fail(invalidInput(`The multipart body could not be read: ${(error as Error).message}`));
  }
  const fields: Record<string, string> = {};
  for (const part of parts)
    if (!Object.hasOwn(fields, part.name))
      Object.defineProperty(fields, part.name, {
        value: await textOf(part.bytes),
        enumerable: true,
      });
  return fields;
}

/** Write side of cohorts: parse → handler → the cohort as the read model shows it. */
export const cohortCommandRoutes =
  (
    ctx: AppContext,
    definitions: Pick<FlagDefinitions, 'forProject'>,
    /** a dynamic cohort's definition is new or changed (its membership is recalculated) */
    changed: (projectId: number, cohortId: number) => void = () => {},
  ): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.addHook('preValidation', notFoundUnlessIntegerIds(['id']));
    // PostHog's UI uploads a static cohort's CSV as multipart/form-data.
    app.addContentTypeParser(
      'multipart/form-data',
      { parseAs: 'buffer', bodyLimit: COHORT_CSV_MAX_BYTES },
      (request, body, done) => {
        formFields(request.headers['content-type'], body as Buffer).then(
          (fields) => done(null, fields),
          (error: unknown) => done(error as Error),
        );
      },
    );
    const deps = cohortDeps(ctx);
    const staticDeps = { ...deps, persons: personBatchesReader(ctx.pool) };
    const cohorts = cohortsReader(ctx.pool);
    const prefix = '/api/projects/:project_id/cohorts';
    const view = async (request: FastifyRequest, id: number, includeDeleted = false) => {
      const row = await cohorts.get(projectOf(request).id, id, includeDeleted);
      return row ? toCohortView(row) : fail(notFound());
    };

    app.post(
      `${prefix}/`,
      {
        config: { scope: 'cohort:write' },
        schema: {
          tags: ['cohorts'],
          params: ProjectParams,
          body: CreateCohortBody,
          response: { 201: CohortView, ...errorResponses },
        },
      },
      async (request, reply) => {
        const body = request.body;
        const input = { projectId: projectOf(request).id, userId: principalOf(request).user.id };
        const filters = body.filters ?? legacyFilters(body.groups);
        const fields = {
          name: body.name,
          description: body.description ?? '',
          filters: filters ?? EMPTY_FILTERS,
        };
        if (body.csv !== undefined && body.is_static !== true)
          fail(invalidInput('A CSV file makes a static cohort: send is_static true.', 'is_static'));
        if (body.is_static !== true && filters === undefined) fail(required('filters'));
        const { cohortId } =
          body.is_static === true
            ? await createStaticCohort(
                staticDeps,
                { ...input, fields, distinctIds: await distinctIdsOfCsv(body.csv ?? '') },
                requestMetadata(ctx, request),
              )
            : await createCohort(deps, { ...input, fields }, requestMetadata(ctx, request));
        if (body.is_static !== true) changed(input.projectId, cohortId);
        return reply.status(201).send(await view(request, cohortId));
      },
    );

    app.patch(
      `${prefix}/:id/`,
      {
        config: { scope: 'cohort:write' },
        schema: {
          tags: ['cohorts'],
          params: CohortParams,
          body: PatchCohortBody,
          response: { 200: CohortView, ...errorResponses },
        },
      },
      async (request) => {
        const { is_static, groups, csv, ...given } = request.body;
        const changes = { ...given, filters: given.filters ?? legacyFilters(groups) };
        if (changes.filters === undefined) delete changes.filters;
        if (is_static !== undefined) {
          const row = await cohorts.get(projectOf(request).id, request.params.id);
          if (row && row.is_static !== is_static)
            fail(invalidInput('A cohort cannot change between static and dynamic.', 'is_static'));
        }
        if (csv !== undefined)
          await addToStaticCohort(
            staticDeps,
            {
              cohortId: request.params.id,
              projectId: projectOf(request).id,
              distinctIds: await distinctIdsOfCsv(csv),
            },
            requestMetadata(ctx, request),
          );
        await patchCohort(
          deps,
          { cohortId: request.params.id, projectId: projectOf(request).id, changes },
          requestMetadata(ctx, request),
        );
        if (changes.filters !== undefined) changed(projectOf(request).id, request.params.id);
        return view(request, request.params.id, changes.deleted === true);
      },
    );

    app.post(
      '/api/projects/:project_id/feature_flags/:id/create_static_cohort_for_flag/',
      {
        config: { scope: 'cohort:write' },
        schema: {
          tags: ['feature_flags', 'cohorts'],
          summary: 'A static cohort of every person for whom the flag is on now',
          params: CohortParams,
          body: z.unknown().optional().describe('ignored (PostHog sends the flag)'),
          response: { 200: z.object({ cohort: CohortView }), ...errorResponses },
        },
      },
      async (request) => {
        const { cohortId } = await createStaticCohortForFlag(
          { ...deps, definitions, persons: personBatchesReader(ctx.pool) },
          {
            projectId: projectOf(request).id,
            userId: principalOf(request).user.id,
            flagId: request.params.id,
            maxPersons: MAX_PERSONS_FOR_FLAG_COHORT,
          },
          requestMetadata(ctx, request),
        );
        return { cohort: await view(request, cohortId) };
      },
    );

    hardDeleteRefused(app, `${prefix}/:id/`, {
      scope: 'cohort:write',
      tags: ['cohorts'],
      params: CohortParams,
      description: 'hard deletes are refused: PATCH {"deleted": true} soft-deletes',
    });
  };
