import fs from 'node:fs';
import Fastify, { type FastifyInstance } from 'fastify';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';

/**
 * Headless Debian Chromium driven by playwright-core, and a static site for it to load, for the posthog-js suites.
 * `.ci/run` installs /usr/bin/chromium. The flags are the ones this machine needs: without the background-networking
 * ones Chromium's own connections are refused here. playwright gives every launch a fresh profile directory.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/**
 * Whether the browser suites run here. A machine with only Node and npm has no Chromium (Playwright's own
 * download cannot be used here): the suites are then skipped with one message, so `npm test` passes on a fresh
 * clone. REQUIRE_BROWSER=1 (`.ci/run` sets it) turns that skip into a failure, so CI cannot pass without them.
 */
export function browserTestsRunHere(): boolean {
  if (fs.existsSync(CHROMIUM)) return true;
  const why =
    `no Chromium at ${CHROMIUM}: to run them, install it (apt-get install chromium) ` +
    'or set CHROMIUM_PATH to a Chromium or Chrome binary';
  if (process.env.REQUIRE_BROWSER === '1')
    throw new Error(`REQUIRE_BROWSER=1 but the browser tests cannot run: ${why}`);
  console.warn(`posthog-js browser tests skipped: ${why}`);
  return false;
}
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: 30_000 });
}

const isLocal = (url: string) => {
  const { hostname, protocol } = new URL(url);
  return (
    protocol === 'data:' ||
    protocol === 'blob:' ||
    hostname === '127.0.0.1' ||
    hostname === 'localhost' ||
    hostname === '[::1]'
  );
};

export type Exchange = {
  method: string;
  url: string;
  status: number | null;
};

/** A context that can reach only this machine: every other request is aborted and listed in `blocked`. */
export async function isolatedContext(browser: Browser): Promise<{
  context: BrowserContext;
  blocked: string[];
  exchanges: Exchange[];
}> {
  const context = await browser.newContext();
  const blocked: string[] = [];
  const exchanges: Exchange[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (isLocal(url)) return route.continue();
    blocked.push(url);
    return route.abort('blockedbyclient');
  });
  context.on('requestfinished', async (request) => {
    const response = await request.response();
    exchanges.push({
      method: request.method(),
      url: request.url(),
      status: response?.status() ?? null,
    });
  });
  context.on('requestfailed', (request) => {
    exchanges.push({ method: request.method(), url: request.url(), status: null });
  });
  return { context, blocked, exchanges };
}

export type Site = { url: string; close: () => Promise<void> };

/**
 * The site that embeds posthog-js: `GET /<name>/` is a page that loads `/<name>/posthog.js` (the package's
 * `dist/array.full.js`, the file PostHog's CDN serves as array.full.js) and runs `initScript`. Its origin differs
 * from the API server's (another port), so every SDK call is cross-origin, as on a customer's site.
 */
export async function startSite(
  bundles: Record<string, string>,
  initScript: (name: string) => string,
): Promise<Site> {
  const app: FastifyInstance = Fastify({ logger: false });
  for (const [name, file] of Object.entries(bundles)) {
    const js = fs.readFileSync(file, 'utf8');
    app.get(`/${name}/posthog.js`, (_req, reply) =>
      reply.type('application/javascript; charset=utf-8').send(js),
    );
    app.get(`/${name}/`, (_req, reply) =>
      reply
        .type('text/html; charset=utf-8')
        .send(
          `<!doctype html><html><head><meta charset="utf-8"><title>hogstream e2e ${name}</title></head>` +
            `<body><h1>${name}</h1><script src="/${name}/posthog.js"></script>` +
            `<script>${initScript(name)}</script></body></html>`,
        ),
    );
  }
  app.get('/favicon.ico', (_req, reply) => reply.status(204).send());
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, close: () => app.close() };
}
