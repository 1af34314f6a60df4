import { randomUUID } from 'node:crypto';
import { type AccessReader, accessReader } from '../../projections/access/accessReader.ts';
import { type AppContext, nextId } from '../../src/appContext.ts';
import type { EventMetadata } from '../../src/core/event.ts';

/**
 * What the access handlers need. Ids are a dependency so that a test can name them; the integer
 * ones come from Postgres sequences outside every read model (a rebuild never reuses them).
 */
export type AccessDeps = Pick<AppContext, 'store' | 'now' | 'awaitProjection'> &
  Readonly<{
    access: AccessReader;
    nextId: (sequence: 'project' | 'user') => Promise<number>;
    /** ids of users (uuid, distinct id), personal API keys and roles */
    uuid: () => string;
  }>;

/** The access handlers' dependencies, for the CLI, the bootstrap and tests. */
export const accessDeps = (ctx: AppContext): AccessDeps => ({
  store: ctx.store,
  now: ctx.now,
  awaitProjection: ctx.awaitProjection,
  access: accessReader(ctx.pool),
  nextId: (sequence) => nextId(ctx.pool, sequence),
  uuid: randomUUID,
});

/** Access commands come from the CLI and the bootstrap: no request, so no key or correlation id. */
export const accessMetadata = (now: Date, userId?: number, projectId?: number): EventMetadata => ({
  occurredAt: now.toISOString(),
  ...(userId !== undefined ? { userId } : {}),
  ...(projectId !== undefined ? { projectId } : {}),
});
