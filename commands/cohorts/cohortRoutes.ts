import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { cohortsReader } from '../../projections/cohorts/cohortsReader.ts';
import type { FlagDefinitions } from '../../projections/featureFlags/flagDefinitions.ts';
import { personBatchesReader } from '../../projections/persons/personBatchesReader.ts';
import { CohortParams } from '../../queries/cohorts/cohortQueryRoutes.ts';
import { CohortView, toCohortView } from '../../queries/cohorts/cohortView.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, invalidInput, notFound } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { principalOf, projectOf } from '../../src/http/apiScope.ts';
import { notFoundUnlessIntegerIds } from '../../src/http/integerIds.ts';
import { requestMetadata } from '../../src/http/requestMetadata.ts';
import { cohortDeps } from './cohortDeps.ts';
import { createCohort } from './createCohort.ts';
import { createStaticCohortForFlag } from './createStaticCohortForFlag.ts';
import { CohortFiltersInput } from './model/cohortFilters.ts';
import { patchCohort } from './patchCohort.ts';

const writable = {
  name: z.string().max(400),
  description: z.string().max(1000).optional(),
  filters: CohortFiltersInput,
  is_static: z.boolean().optional().describe('static cohorts are not supported yet: false only'),
  groups: z.array(z.unknown()).max(0).optional().describe('legacy groups: use filters'),
};
const CreateCohortBody = z.object(writable).meta({ id: 'CohortCreate' });
const PatchCohortBody = z
  .object({
    name: writable.name.optional(),
    description: writable.description,
    filters: writable.filters.optional(),
    is_static: writable.is_static,
    groups: writable.groups,
    deleted: z.boolean().optional().describe('true soft-deletes the cohort'),
  })
  .meta({ id: 'CohortPatch' });
const ProjectParams = z.object({ project_id: z.string() });

/** The most persons `create_static_cohort_for_flag` evaluates (a project past it gets a 413). */
export const MAX_PERSONS_FOR_FLAG_COHORT = 100_000;

const refuseStatic = (isStatic: boolean | undefined) => {
  if (isStatic === true)
    fail(invalidInput('Static cohorts are not supported yet: send is_static false.', 'is_static'));
};

/** Write side of cohorts: parse → handler → the cohort as the read model shows it. */
export const cohortCommandRoutes =
  (ctx: AppContext, definitions: Pick<FlagDefinitions, 'forProject'>): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.addHook('preValidation', notFoundUnlessIntegerIds(['id']));
    const deps = cohortDeps(ctx);
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
        refuseStatic(body.is_static);
        const { cohortId } = await createCohort(
          deps,
          {
            projectId: projectOf(request).id,
            userId: principalOf(request).user.id,
            fields: { name: body.name, description: body.description ?? '', filters: body.filters },
          },
          requestMetadata(ctx, request),
        );
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
        const { is_static, groups: _groups, ...changes } = request.body;
        refuseStatic(is_static);
        await patchCohort(
          deps,
          { cohortId: request.params.id, projectId: projectOf(request).id, changes },
          requestMetadata(ctx, request),
        );
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

    app.delete(
      `${prefix}/:id/`,
      {
        config: { scope: 'cohort:write' },
        schema: { tags: ['cohorts'], params: CohortParams, response: {} },
      },
      async (_request, reply) => reply.status(405).send(),
    );
  };
