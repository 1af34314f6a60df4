import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/testService.ts';
import { expectError } from './helpers.ts';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

const EXPECTED = {
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
};

describe('posthog-js remote config', () => {
  it('GET /array/<token>/config answers the JSON config, no credentials needed, cacheable', async () => {
    const res = await t.api('GET', `/array/${t.projectApiKey}/config`, undefined, null);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ token: t.projectApiKey, ...EXPECTED, siteApps: [] });
    const raw = await fetch(`${t.url}/array/${t.projectApiKey}/config`);
    expect(raw.headers.get('cache-control')).toBe('public, max-age=300');
  });

  it('GET /array/<token>/config.js is a script that sets window._POSTHOG_REMOTE_CONFIG[token]', async () => {
    const res = await fetch(`${t.url}/array/${t.projectApiKey}/config.js`, {
      headers: { origin: 'http://example.test' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    expect(res.headers.get('access-control-allow-origin')).toBe('http://example.test');
    const window: Record<string, any> = { _POSTHOG_REMOTE_CONFIG: { other: { config: {} } } };
    vm.runInNewContext(await res.text(), { window });
    expect(window._POSTHOG_REMOTE_CONFIG).toEqual({
      other: { config: {} },
      [t.projectApiKey]: { config: { token: t.projectApiKey, ...EXPECTED }, siteApps: [] },
    });
  });

  it('an unknown or malformed token answers 404 / 400 in the error shape', async () => {
    for (const suffix of ['config', 'config.js']) {
      expectError(await t.api('GET', `/array/phc_unknown/${suffix}`, undefined, null), 404, {
        code: 'not_found',
      });
      expectError(await t.api('GET', `/array/a'b/${suffix}`, undefined, null), 400);
    }
  });
});
