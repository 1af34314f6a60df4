import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AccessReader } from '../../projections/access/accessReader.ts';
import { fail, notFound } from '../../src/core/errors.ts';
import { hashKey } from '../../src/core/keys.ts';
import { errorResponses } from '../../src/http/apiError.ts';

/**
 * posthog-js remote config: every posthog-js since 1.17x asks for it on load, first as a script
 * (`/array/<token>/config.js`, which sets `window._POSTHOG_REMOTE_CONFIG[token]`), then, if that
 * fails, as JSON (`/array/<token>/config`). Without it the SDK logs an error and falls back to its
 * local config. hogstream has no session recording, surveys, heatmaps, site apps or autocaptured
 * exceptions, so the answer switches them all off; `hasFeatureFlags: true` only lets the SDK ask
 * /flags (or /decide) as usual. No `analytics.endpoint`: the SDK keeps its default `/e/`.
 */
export const RemoteConfig = z
  .object({
    token: z.string(),
    supportedCompression: z.array(z.string()),
    hasFeatureFlags: z.boolean(),
    captureDeadClicks: z.boolean(),
    capturePerformance: z.boolean(),
    autocapture_opt_out: z.boolean(),
    autocaptureExceptions: z.boolean(),
    elementsChainAsString: z.boolean(),
    sessionRecording: z.boolean(),
    heatmaps: z.boolean(),
    surveys: z.boolean(),
    defaultIdentifiedOnly: z.boolean(),
    siteApps: z.array(z.never()),
  })
  .meta({ id: 'RemoteConfig' });
type RemoteConfig = z.infer<typeof RemoteConfig>;

const TokenParams = z.object({
  // A project key is `phc_` + base62; the bound keeps the lookup and the script small.
  token: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/, 'not a project API key')
    .describe('project API key'),
});

/** Browsers and proxies may keep the answer a few minutes, as PostHog's CDN does. */
const CACHE_CONTROL = 'public, max-age=300';

const configFor = (token: string): RemoteConfig => ({
  token,
  supportedCompression: ['gzip', 'gzip-js'],
  hasFeatureFlags: true,
  captureDeadClicks: false,
  capturePerformance: false,
  autocapture_opt_out: false,
  autocaptureExceptions: false,
  elementsChainAsString: true,
  sessionRecording: false,
  heatmaps: false,
  surveys: false,
  defaultIdentifiedOnly: true,
  siteApps: [],
});

/** The script form: the same config, assigned where posthog-js looks for it. */
export const remoteConfigScript = (config: RemoteConfig): string => {
  const token = JSON.stringify(config.token);
  const body = JSON.stringify({ config: { ...config, siteApps: undefined }, siteApps: [] });
  return `(function() {\n  window._POSTHOG_REMOTE_CONFIG = window._POSTHOG_REMOTE_CONFIG || {};\n  window._POSTHOG_REMOTE_CONFIG[${token}] = ${body};\n})();\n`;
};

/** GET /array/:token/config and /array/:token/config.js (public: the token is the project key). */
export const remoteConfigRoutes =
  (access: Pick<AccessReader, 'projectIdByApiKeyHash'>): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    // Every page load asks: answers are cached (misses briefly) so a flood of page loads, or of
    // made-up tokens, does not reach Postgres each time; a new project is seen within a second.
    const cache = new Map<string, { known: boolean; until: number }>();
    const known = async (token: string) => {
      const hash = hashKey(token);
      let hit = cache.get(hash);
      if (!hit || hit.until <= Date.now()) {
        const isKnown = (await access.projectIdByApiKeyHash(hash)) !== null;
        if (cache.size >= 10_000) cache.clear();
        hit = { known: isKnown, until: Date.now() + (isKnown ? 30_000 : 1_000) };
        cache.set(hash, hit);
      }
      if (!hit.known) fail(notFound('No project has this API key.'));
      return configFor(token);
    };
    app.get(
      '/array/:token/config',
      {
        schema: {
          tags: ['remote config'],
          summary: 'posthog-js remote config (JSON)',
          security: [],
          params: TokenParams,
          response: { 200: RemoteConfig, ...errorResponses },
        },
      },
      async (request, reply) => {
        const config = await known(request.params.token);
        reply.header('cache-control', CACHE_CONTROL);
        return config;
      },
    );
    app.get(
      '/array/:token/config.js',
      {
        schema: {
          tags: ['remote config'],
          summary: 'posthog-js remote config (script)',
          security: [],
          params: TokenParams,
          response: { 200: z.string(), ...errorResponses },
        },
      },
      async (request, reply) => {
        const script = remoteConfigScript(await known(request.params.token));
        return reply
          .header('cache-control', CACHE_CONTROL)
          .type('application/javascript; charset=utf-8')
          .send(script);
      },
    );
  };
