import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../appContext.ts';
import type { EventMetadata } from '../core/event.ts';
import { principalOf, projectOf } from './apiScope.ts';

/** Who did it and when, for the events a REST write appends (the route has been authenticated). */
export const requestMetadata = (ctx: AppContext, request: FastifyRequest): EventMetadata => ({
  projectId: projectOf(request).id,
  userId: principalOf(request).user.id,
  apiKeyId: principalOf(request).keyId,
  correlationId: request.id,
  occurredAt: ctx.now().toISOString(),
});
