/**
 * The console's pages, each with the scope its API reads need. The server lists the same paths
 * (src/http/consoleRoutes.ts) so a reload of any of them loads the app.
 */
export const PAGES = [
  { path: '/events', label: 'Events', scope: 'query:read' },
  { path: '/persons', label: 'Persons', scope: 'person:read' },
  { path: '/feature_flags', label: 'Feature flags', scope: 'feature_flag:read' },
  { path: '/insights', label: 'Insights', scope: 'insight:read' },
  { path: '/cohorts', label: 'Cohorts', scope: 'cohort:read' },
  { path: '/operations', label: 'Operations', scope: '*' },
] as const;
