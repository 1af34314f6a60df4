import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';

/**
 * The console's pages (console/src/routes.ts): each loads index.html, so a bookmarked or reloaded URL opens the app,
 * which then routes in the browser. Listed rather than a catch-all so every other unknown path (and every `/api/`
 * one) keeps answering the API's JSON 404. `/flags/` itself is PostHog's flags endpoint: the console's flag pages
 * live at `/feature_flags` (PostHog's own UI paths), `/flags/:id` only opens one.
 */
export const CONSOLE_PAGES = [
  '/',
  '/sign-in',
  '/events',
  '/events/*',
  '/persons',
  '/persons/*',
  '/feature_flags',
  '/feature_flags/*',
  '/flags/:id',
  '/insights',
  '/insights/*',
  '/cohorts',
  '/cohorts/*',
  '/operations',
  '/operations/*',
] as const;

/** console/dist beside the sources (tsx) or beside dist/ (the compiled server in the Docker image). */
export function consoleDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [
    path.resolve(here, '../../console/dist'),
    path.resolve(here, '../../../console/dist'),
  ];
  return candidates.find((dir) => fs.existsSync(path.join(dir, 'index.html'))) ?? candidates[0]!;
}

const notBuilt = (reply: FastifyReply) =>
  reply
    .status(503)
    .type('text/plain; charset=utf-8')
    .send(
      'The console is not built: run `npm run build:console` (npm install and npm start do it).',
    );

/**
 * The console at `/`: hashed files under /assets/ never change (a year, immutable); index.html names the current
 * ones, so it is revalidated on every load (no-cache) and a deploy is picked up at the next reload.
 */
export const consoleRoutes =
  (dir: string = consoleDir()): FastifyPluginAsync =>
  async (app) => {
    const index = path.join(dir, 'index.html');
    const built = fs.existsSync(index);
    if (built)
      await app.register(fastifyStatic, {
        root: path.join(dir, 'assets'),
        prefix: '/assets/',
        immutable: true,
        maxAge: '365d',
        // Brotli/gzip siblings written by the build, chosen by Accept-Encoding.
        preCompressed: true,
        index: false,
      });
    for (const url of CONSOLE_PAGES)
      app.route({
        method: ['GET', 'HEAD'],
        url,
        schema: { hide: true },
        // Read per request (a few hundred bytes): a rebuild beside a running server is served at once.
        handler: async (_request, reply) =>
          built
            ? reply
                .header('cache-control', 'no-cache')
                .type('text/html; charset=utf-8')
                .send(await fs.promises.readFile(index))
            : notBuilt(reply),
      });
  };
