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
      }),
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
          summary: 'Read model positions, pending events and lag',
          response: { 200: ProjectionsStatus, ...errorResponses },
        },
      },
      async () => (await readModelStatus(ctx)).json,
    );
  };
