import type { ChProjection } from '../src/processing/clickhouseProjection.ts';
import type { PgProjection } from '../src/processing/projection.ts';
import { accessProjection } from './access/accessProjection.ts';
import { eventsProjection } from './events/eventsProjection.ts';
import { featureFlagsProjection } from './featureFlags/featureFlagsProjection.ts';
import { ingestionWarningsProjection } from './ingestionWarnings/ingestionWarningsProjection.ts';
import { personsProjection } from './persons/personsProjection.ts';

/** The one list the server, the CLI's rebuild and the migrations use. */
export const pgProjections: readonly PgProjection[] = [accessProjection, featureFlagsProjection, ingestionWarningsProjection, personsProjection];
export const chProjections: readonly ChProjection[] = [eventsProjection];
