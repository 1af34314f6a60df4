import { personDistinctIdReadModel } from '../../projections/analytics/personDistinctIdProjection.ts';
import { eventsProjection } from '../../projections/events/eventsProjection.ts';
import { personsProjection } from '../../projections/persons/personsProjection.ts';
import { type AppContext, awaitNewest } from '../../src/appContext.ts';

/** Read-your-writes for analytics: events, persons and the distinct id → person map (bounded wait). */
export const awaitAnalytics = (ctx: AppContext) =>
  awaitNewest(
    ctx,
    { eventTypes: ['EventCaptured'] },
    eventsProjection,
    personsProjection,
    personDistinctIdReadModel,
  );
