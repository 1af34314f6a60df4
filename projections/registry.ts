import type { PgProjection } from '../src/processing/projection.ts';
import { accessProjection } from './access/accessProjection.ts';
import { featureFlagsProjection } from './featureFlags/featureFlagsProjection.ts';

/** The one list the server, the CLI's rebuild and the migrations use. */
export const pgProjections: readonly PgProjection[] = [accessProjection, featureFlagsProjection];
