import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { parsePersonRef } from '../../commands/persons/model/personRef.ts';
import { cohortsProjection } from '../../projections/cohorts/cohortsProjection.ts';
import { cohortsReader } from '../../projections/cohorts/cohortsReader.ts';
import { cohortMembership } from '../../projections/featureFlags/evaluation/evaluateFlags.ts';
import { personsProjection } from '../../projections/persons/personsProjection.ts';
import { personsReader } from '../../projections/persons/personsReader.ts';
import { type AppContext, awaitNewest } from '../../src/appContext.ts';
import { fail, invalidInput, notFound } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { ProjectParams } from '../../src/http/params.ts';
import { CohortView, toCohortView } from './cohortView.ts';

/**
 * `persons/cohorts/?person_id=`: the cohorts one person belongs to: dynamic ones decided from the
 * person's stored properties with the flag evaluator's cohort semantics (so a flag on the cohort
 * and this list agree), static ones from their person set.
 */
export const personCohortsRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const persons = personsReader(ctx.pool);
    const cohorts = cohortsReader(ctx.pool);
    app.get(
      '/api/projects/:project_id/persons/cohorts/',
      {
        config: { scope: 'person:read' },
        schema: {
          tags: ['persons'],
          summary: 'The cohorts a person belongs to',
          params: ProjectParams,
          querystring: z.object({
            person_id: z.string().max(100).describe('the person’s uuid or integer id'),
          }),
          response: { 200: z.object({ results: z.array(CohortView) }), ...errorResponses },
        },
      },
      async (request) => {
        const ref = parsePersonRef(request.query.person_id);
        if (!ref) fail(invalidInput('person_id must be a person uuid or integer id.', 'person_id'));
        await awaitNewest(ctx, personsProjection.filter, personsProjection);
        await awaitNewest(ctx, cohortsProjection.filter, cohortsProjection);
        const projectId = projectOf(request).id;
        const person = await persons.getPerson(projectId, ref);
        if (!person) fail(notFound('Person not found.'));
        const rows = await cohorts.all(projectId);
        const dynamic = rows.filter((r) => !r.is_static);
        const inStatic = await cohorts.staticCohortsOf(
          person.uuid,
          rows.filter((r) => r.is_static).map((r) => r.id),
        );
        const members = new Set([
          ...cohortMembership(
            {
              distinctId: person.distinct_ids[0] ?? '',
              person: { properties: person.properties, complete: true },
              cohorts: Object.fromEntries(dynamic.map((r) => [String(r.id), r.filters.properties])),
            },
            { now: ctx.now },
          ),
          ...inStatic.map(String),
        ]);
        return { results: rows.filter((r) => members.has(String(r.id))).map(toCohortView) };
      },
    );
  };
