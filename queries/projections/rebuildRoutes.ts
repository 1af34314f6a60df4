import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../src/appContext.ts';
import { domainError, fail, notFound } from '../../src/core/errors.ts';
import { ApiErrorBody, errorResponses } from '../../src/http/apiError.ts';
import { notFoundUnlessIntegerIds } from '../../src/http/integerIds.ts';

const Rebuild = z
  .object({
    id: z.number().int(),
    target: z.string().describe('what is rebuilt: `events` (the ClickHouse read models)'),
    status: z
      .enum(['queued', 'running', 'finished', 'failed'])
      .describe('queued until the server takes it (within a second or two), then running'),
    read_model: z.string().nullable().describe('the read model being rebuilt now'),
    position: z.string().nullable().describe('log position the rebuild has reached'),
    head: z.string().nullable().describe('log position it rebuilds up to'),
    requested_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
    error: z.string().nullable().describe('why it failed (status `failed`)'),
  })
  .meta({ id: 'Rebuild' });

type Row = {
  id: string;
  target: string;
  requested_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  name: string | null;
  position: string | null;
  head: string | null;
  error: string | null;
};

const iso = (d: Date | null) => d?.toISOString() ?? null;
const viewOf = (r: Row): z.infer<typeof Rebuild> => ({
  id: Number(r.id),
  target: r.target,
  status: r.error ? 'failed' : r.finished_at ? 'finished' : r.started_at ? 'running' : 'queued',
  read_model: r.name,
  position: r.position,
  head: r.head,
  requested_at: r.requested_at.toISOString(),
  started_at: iso(r.started_at),
  finished_at: iso(r.finished_at),
  error: r.error,
});

const LIST_DEFAULT = 20;
const LIST_MAX = 100;
const COLUMNS =
  'id, target, requested_at, started_at, finished_at, name, position, head, error FROM rebuild_requests';

/**
 * Rebuilds over HTTP: the same `rebuild_requests` rows the CLI's `rebuild events` writes (the
 * server that holds chDB claims them and writes its progress back), so a console can start one and
 * watch it. Server-wide, so only a key with every scope (`*`) may; registered only when ClickHouse
 * is on, since the server rebuilds its ClickHouse read models only.
 */
export const rebuildRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.addHook('preValidation', notFoundUnlessIntegerIds(['id']));
    const one = async (id: number) =>
      (await ctx.pool.query<Row>(`SELECT ${COLUMNS} WHERE id = $1`, [id])).rows[0];

    app.post(
      '/api/projections/rebuilds/',
      {
        config: { scope: '*' },
        schema: {
          tags: ['ops'],
          summary:
            'Start a rebuild of the ClickHouse read models from the log, beside the live ones',
          body: z.object({ target: z.enum(['events']).default('events') }).strict(),
          response: { 202: Rebuild, 409: ApiErrorBody, ...errorResponses },
        },
      },
      async (request, reply) => {
        // One at a time: a second would rebuild the same tables beside the first. A request silent
        // for 10 minutes was left by a server that died and does not block a new one.
        const { rows } = await ctx.pool.query<Row>(
          `INSERT INTO rebuild_requests (target)
             SELECT $1 WHERE NOT EXISTS
               (SELECT 1 FROM rebuild_requests WHERE finished_at IS NULL AND error IS NULL
                  AND coalesce(updated_at, requested_at) > now() - interval '10 minutes')
           RETURNING ${COLUMNS.replace(' FROM rebuild_requests', '')}`,
          [request.body.target],
        );
        const row = rows[0];
        if (!row)
          fail(
            domainError(
              'conflict',
              'rebuild_in_progress',
              'A rebuild is already queued or running: watch it in GET /api/projections/rebuilds/.',
            ),
          );
        return reply.status(202).send(viewOf(row));
      },
    );

    app.get(
      '/api/projections/rebuilds/',
      {
        config: { scope: '*' },
        schema: {
          tags: ['ops'],
          summary: 'Rebuilds, newest first',
          querystring: z.object({
            limit: z.coerce
              .number()
              .int()
              .min(1)
              .max(LIST_MAX)
              .default(LIST_DEFAULT)
              .describe(`page size (default ${LIST_DEFAULT}, at most ${LIST_MAX})`),
          }),
          response: { 200: z.object({ results: z.array(Rebuild) }), ...errorResponses },
        },
      },
      async (request) => {
        const { rows } = await ctx.pool.query<Row>(`SELECT ${COLUMNS} ORDER BY id DESC LIMIT $1`, [
          request.query.limit,
        ]);
        return { results: rows.map(viewOf) };
      },
    );

    app.get(
      '/api/projections/rebuilds/:id/',
      {
        config: { scope: '*' },
        schema: {
          tags: ['ops'],
          summary: "A rebuild's status and progress",
          params: z.object({ id: z.coerce.number().int().describe('rebuild id') }),
          response: { 200: Rebuild, ...errorResponses },
        },
      },
      async (request) => {
        const row = await one(request.params.id);
        return row ? viewOf(row) : fail(notFound());
      },
    );
  };
