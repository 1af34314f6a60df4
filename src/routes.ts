import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from './appContext.ts';
import { featureFlagCommandRoutes } from '../commands/featureFlags/featureFlagRoutes.ts';
import { featureFlagQueryRoutes } from '../queries/featureFlags/featureFlagQueryRoutes.ts';
import { projectQueryRoutes } from '../queries/projects/projectRoutes.ts';
import { ingestionWarningRoutes } from '../queries/ingestionWarnings/ingestionWarningRoutes.ts';

/** Every HTTP slice, in one list (composition root). */
export const routes = (ctx: AppContext): FastifyPluginAsync[] => [
  projectQueryRoutes(ctx),
  featureFlagQueryRoutes(ctx),
  featureFlagCommandRoutes(ctx),
  ingestionWarningRoutes(ctx),
];
