import type { FastifyPluginAsync } from 'fastify';
import { personalApiKeyRoutes } from '../commands/access/personalApiKeyRoutes.ts';
import { projectApiKeyRoutes } from '../commands/access/projectApiKeyRoutes.ts';
import { actionCommandRoutes } from '../commands/actions/actionRoutes.ts';
import { annotationCommandRoutes } from '../commands/annotations/annotationRoutes.ts';
import { cohortCommandRoutes } from '../commands/cohorts/cohortRoutes.ts';
import { dashboardCommandRoutes } from '../commands/dashboards/dashboardRoutes.ts';
import { featureFlagCommandRoutes } from '../commands/featureFlags/featureFlagRoutes.ts';
import { flagDashboardRoutes } from '../commands/featureFlags/flagDashboardRoutes.ts';
import { personCommandRoutes } from '../commands/persons/personRoutes.ts';
import type { FlagDefinitions } from '../projections/featureFlags/flagDefinitions.ts';
import type { FlagEvaluationService } from '../projections/featureFlags/flagEvaluationService.ts';
import { actionQueryRoutes } from '../queries/actions/actionQueryRoutes.ts';
import { annotationQueryRoutes } from '../queries/annotations/annotationQueryRoutes.ts';
import { cohortPersonsRoutes } from '../queries/cohorts/cohortPersonsRoutes.ts';
import { cohortQueryRoutes } from '../queries/cohorts/cohortQueryRoutes.ts';
import { personCohortsRoutes } from '../queries/cohorts/personCohortsRoutes.ts';
import { featureFlagQueryRoutes } from '../queries/featureFlags/featureFlagQueryRoutes.ts';
import { flagActionRoutes } from '../queries/featureFlags/flagActionRoutes.ts';
import { flagRemoteConfigRoutes } from '../queries/featureFlags/flagRemoteConfigRoutes.ts';
import { localEvaluationRoutes } from '../queries/featureFlags/localEvaluationRoutes.ts';
import { userBlastRadiusRoutes } from '../queries/featureFlags/userBlastRadiusRoutes.ts';
import { groupQueryRoutes } from '../queries/groups/groupQueryRoutes.ts';
import { ingestionWarningRoutes } from '../queries/ingestionWarnings/ingestionWarningRoutes.ts';
import { savedInsightQueryRoutes } from '../queries/insights/savedInsightQueryRoutes.ts';
import { personActivityRoutes } from '../queries/persons/personActivityRoutes.ts';
import { personQueryRoutes } from '../queries/persons/personQueryRoutes.ts';
import { personTimeTravelRoutes } from '../queries/personTimeTravel/personTimeTravelRoutes.ts';
import { projectionRoutes } from '../queries/projections/projectionRoutes.ts';
import { projectQueryRoutes } from '../queries/projects/projectRoutes.ts';
import type { AppContext } from './appContext.ts';

/**
 * The `/api` slices that need only the app's context and the flag services. `src/service.ts`
 * registers the others: those that need the ClickHouse client (events, insights, cohorts' members…)
 * and the public ones outside the `/api` scope (capture, /decide, remote config).
 */
export const routes = (
  ctx: AppContext,
  flagEvaluation: FlagEvaluationService,
  flagDefinitions: FlagDefinitions,
  /** a dynamic cohort was created or its definition changed: recalculate its members */
  cohortChanged: (projectId: number, cohortId: number) => void = () => {},
): FastifyPluginAsync[] => [
  projectQueryRoutes(ctx),
  featureFlagQueryRoutes(ctx),
  flagActionRoutes(ctx, flagEvaluation),
  featureFlagCommandRoutes(ctx),
  flagDashboardRoutes(ctx),
  localEvaluationRoutes(ctx),
  flagRemoteConfigRoutes(ctx),
  userBlastRadiusRoutes(ctx),
  ingestionWarningRoutes(ctx),
  personQueryRoutes(ctx),
  groupQueryRoutes(ctx),
  cohortQueryRoutes(ctx),
  personCohortsRoutes(ctx),
  cohortPersonsRoutes(ctx),
  cohortCommandRoutes(ctx, flagDefinitions, cohortChanged),
  personTimeTravelRoutes(ctx),
  personCommandRoutes(ctx),
  personActivityRoutes(ctx),
  projectionRoutes(ctx),
  personalApiKeyRoutes(ctx),
  projectApiKeyRoutes(ctx),
  savedInsightQueryRoutes(ctx),
  dashboardCommandRoutes(ctx),
  annotationQueryRoutes(ctx),
  annotationCommandRoutes(ctx),
  actionQueryRoutes(ctx),
  actionCommandRoutes(ctx),
];
