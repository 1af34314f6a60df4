import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../src/appContext.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { readModelStatus } from './readModelStatus.ts';

const ProjectionsStatus = z
  .object({
    head: z.string().describe('position of the last event in the log'),
    read_models: z.array(
      z.object({
        name: z.string(),
        position: z.string().describe('checkpoint: the last log position applied'),
        pending_events: z
          .string()
          .describe('events of its kinds not applied yet (counted up to 1,000, then "1000+")'),
        lag_seconds: z.number().describe('age of the oldest of them; 0 when caught up'),
        parked_events: z
          .number()
          .int()
          .describe('events it could not apply and set aside (it goes on with the next ones)'),
      }),
    ),
    parked: z
      .array(
        z.object({
          read_model: z.string(),
          position: z.string().describe("the parked event's log position"),
          stream: z.string(),
          event_type: z.string(),
          event_id: z.string(),
          error: z.string().describe('why the read model could not apply it'),
          attempts: z.number().int(),
          parked_at: z.string(),
        }),
      )
      .describe(
        'parked events, oldest first by read model (the first 100; `npm run cli -- parked list` has all, and replays or drops them)',
      ),
  })
  .meta({ id: 'ProjectionsStatus' });

/**
 * GET /api/projections/: the read models' positions against the log (what `npm run cli -- status`
 * prints). Server-wide, so only a key with every scope (`*`, an administrator's) may read it.
 */
export const projectionRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.get(
      '/api/projections/',
      {
        config: { scope: '*' },
        schema: {
          tags: ['ops'],
          summary: 'Read model positions, pending events, lag and parked events',
          response: { 200: ProjectionsStatus, ...errorResponses },
        },
      },
      async () => (await readModelStatus(ctx)).json,
    );
  };
