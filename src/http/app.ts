import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import type pg from 'pg';
import { z } from 'zod';
import { installAuth } from './auth.ts';
import { installErrorHandler } from './errorHandler.ts';

export type Readiness = () => Promise<{ ok: boolean; failing: string[] }>;

export type AppOptions = Readonly<{
  pool: pg.Pool;
  routes: readonly FastifyPluginAsync[];
  readiness: Readiness;
  logLevel?: string;
  bodyLimit?: number;
}>;

/** Fastify with zod validation and serialisation, the OpenAPI document, auth and error mapping. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: { level: options.logLevel ?? 'info' },
    bodyLimit: options.bodyLimit ?? 20 * 1024 * 1024,
    routerOptions: { ignoreTrailingSlash: true },
    // Closing waits for in-flight requests (and so their appends) to finish.
    return503OnClosing: true,
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installErrorHandler(app);

  await app.register(swagger, {
    openapi: {
      info: { title: 'hogstream — PostHog-compatible analytics API', version: '0.1.0' },
      components: {
        securitySchemes: { PersonalApiKey: { type: 'http', scheme: 'bearer' } },
      },
      security: [{ PersonalApiKey: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(swaggerUi, { routePrefix: '/api/schema/swagger-ui' });
  app.get('/api/schema', { schema: { hide: true } }, async () => app.swagger());

  app.get(
    '/_health',
    { schema: { tags: ['ops'], response: { 200: z.object({ status: z.literal('ok') }) } } },
    async () => ({ status: 'ok' as const }),
  );
  app.get(
    '/_readyz',
    {
      schema: {
        tags: ['ops'],
        response: {
          200: z.object({ status: z.literal('ready') }),
          503: z.object({ status: z.literal('not_ready'), failing: z.array(z.string()) }),
        },
      },
    },
    async (_request, reply) => {
      const r = await options.readiness();
      return r.ok ? { status: 'ready' as const } : reply.status(503).send({ status: 'not_ready' as const, failing: r.failing });
    },
  );

  installAuth(app, options.pool);
  for (const routes of options.routes) await app.register(routes);
  return app;
}
