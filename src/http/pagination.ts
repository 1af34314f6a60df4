import type { FastifyRequest } from 'fastify';
import { z } from 'zod';

export const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100).describe('page size (1–1000)'),
  offset: z.coerce.number().int().min(0).default(0).describe('results to skip'),
});
export type PageQuery = z.infer<typeof PageQuery>;

/** Activity lists: a page, optionally narrowed to a time window (ISO 8601, exclusive bounds). */
export const ActivityQuery = PageQuery.extend({
  after: z.iso
    .datetime({ offset: true })
    .optional()
    .describe('only changes made after this time (ISO 8601, exclusive)'),
  before: z.iso
    .datetime({ offset: true })
    .optional()
    .describe('only changes made before this time (ISO 8601, exclusive)'),
});

export const paginated = <T extends z.ZodType>(item: T) =>
  z.object({
    count: z.number().int(),
    next: z.string().nullable(),
    previous: z.string().nullable(),
    results: z.array(item),
  });

/** Absolute next/previous URLs keep every other query parameter of the request. */
export function pageLinks(request: FastifyRequest, page: PageQuery, count: number) {
  const base = new URL(request.url, `${request.protocol}://${request.headers.host ?? 'localhost'}`);
  const at = (offset: number) => {
    const url = new URL(base);
    url.searchParams.set('limit', String(page.limit));
    url.searchParams.set('offset', String(offset));
    return url.toString();
  };
  return {
    next: page.offset + page.limit < count ? at(page.offset + page.limit) : null,
    previous: page.offset > 0 ? at(Math.max(0, page.offset - page.limit)) : null,
  };
}

/** A page answer: `{count, next, previous, results}` for `page` of a list of `count` items. */
export const pageAnswer = <T>(
  request: FastifyRequest,
  page: PageQuery,
  result: { count: number; results: T[] },
) => ({ count: result.count, ...pageLinks(request, page, result.count), results: result.results });

/** Activity lists also repeat the count as `total_count`, as PostHog's activity log does. */
export const activityAnswer = <T>(
  request: FastifyRequest,
  page: PageQuery,
  result: { count: number; results: T[] },
) => ({ ...pageAnswer(request, page, result), total_count: result.count });
