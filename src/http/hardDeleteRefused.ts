import { z } from 'zod';
import type { ZodApp } from './zodApp.ts';

/**
 * `DELETE <path>` of a soft-deleted resource: 405 with no body at all (the documented null is its
 * absence), as PostHog's ForbidDestroyModel answers; a delete is `PATCH {"deleted": true}`.
 * `description` is the 405's text in the OpenAPI document.
 */
export function hardDeleteRefused(
  app: Pick<ZodApp, 'delete'>,
  path: string,
  o: { scope: string; tags: string[]; params: z.ZodType; description: string },
): void {
  app.delete(
    path,
    {
      config: { scope: o.scope },
      schema: {
        tags: o.tags,
        params: o.params,
        response: { 405: z.null().describe(o.description) },
      },
    },
    async (_request, reply) => reply.status(405).send(undefined as never),
  );
}
