import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { parsePersonRef } from '../../commands/persons/model/personRef.ts';
import type { PersonView } from '../../commands/persons/model/personView.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, notFound, validation } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { ProjectParams } from '../../src/http/params.ts';
import { personAsOf } from './personAsOf.ts';
import { timeTravelDeps } from './personSlice.ts';
import { propertiesTimeline } from './propertiesTimeline.ts';
import { parseTimelineQuery } from './timelineParams.ts';

export const AsOfQuery = z
  .string()
  .describe(
    'ISO 8601 time: the person as it was then (event time, inclusive; see queries/personTimeTravel/README.md)',
  );

const TimelinePoint = z.object({
  timestamp: z.string(),
  properties: z.record(z.string(), z.unknown()),
  relevant_event_count: z.number().int(),
});
const PropertiesTimelineView = z
  .object({
    points: z.array(TimelinePoint),
    crucial_property_keys: z.array(z.string()),
    effective_date_from: z.string(),
    effective_date_to: z.string(),
  })
  .meta({ id: 'PersonPropertiesTimeline' });

const PersonParams = ProjectParams.extend({
  id: z.string().describe('person: integer id or uuid'),
});

/**
 * The `as_of` branch of GET persons/:id/ (queries/persons/personQueryRoutes.ts calls it):
 * `if (request.query.as_of !== undefined) return answerPersonAsOf(ctx, projectOf(request).id, request.params.id, request.query.as_of);`
 * 400 (attr `as_of`) for a time that does not parse, 404 when the person did not exist then.
 */
export async function answerPersonAsOf(
  ctx: AppContext,
  projectId: number,
  rawId: string,
  asOf: string,
): Promise<PersonView> {
  const cutoff = new Date(asOf);
  if (asOf.trim() === '' || Number.isNaN(cutoff.getTime()))
    fail(validation('invalid_input', `as_of: invalid date "${asOf}"`, 'as_of'));
  const ref = parsePersonRef(rawId);
  const person = ref ? await personAsOf(timeTravelDeps(ctx), projectId, ref, cutoff) : null;
  if (!person) fail(notFound('Not found.'));
  return person;
}

export const personTimeTravelRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();

    app.get(
      '/api/projects/:project_id/persons/:id/properties_timeline/',
      {
        config: { scope: 'person:read' },
        schema: {
          tags: ['persons'],
          description:
            "Points where the values of the crucial person properties (person filters of `properties`, `events[].properties`, person breakdown) change across the person's events, computed from the log.",
          params: PersonParams,
          querystring: z.object({
            events: z
              .string()
              .optional()
              .describe('JSON list of event entities [{"id": "$pageview"}]; absent = all events'),
            actions: z
              .string()
              .optional()
              .describe('JSON list; must be empty (actions are not supported yet)'),
            properties: z
              .string()
              .optional()
              .describe('JSON property filters; their person keys are the crucial keys'),
            date_from: z
              .string()
              .optional()
              .describe('ISO time, YYYY-MM-DD or relative (-7d); default -7d'),
            date_to: z
              .string()
              .optional()
              .describe('ISO time, YYYY-MM-DD (end of day) or relative; default end of today'),
            interval: z
              .string()
              .optional()
              .describe('hour, day, week or month: the width used when date_from == date_to'),
            breakdown: z.string().optional().describe('breakdown property (insight filter)'),
            breakdown_type: z
              .string()
              .optional()
              .describe('person | event | group (insight filter)'),
            aggregation_group_type_index: z
              .string()
              .optional()
              .describe('group type index of a group insight'),
            display: z.string().optional().describe('insight display (accepted, not used)'),
            format: z.enum(['json']).optional().describe('json only'),
          }),
          response: { 200: PropertiesTimelineView, ...errorResponses },
        },
      },
      async (request) => {
        const params = parseTimelineQuery(request.query, ctx.now().getTime());
        const ref = parsePersonRef(request.params.id);
        const timeline = ref
          ? await propertiesTimeline(timeTravelDeps(ctx), projectOf(request).id, ref, params)
          : null;
        if (!timeline) fail(notFound('Not found.'));
        return timeline;
      },
    );
  };
