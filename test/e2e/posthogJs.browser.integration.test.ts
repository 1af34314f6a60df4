import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBackEvents } from '../support/captureReadback.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import {
  browserTestsRunHere,
  isolatedContext,
  launchChromium,
  type Site,
  startSite,
} from './browser.ts';
import {
  companyKey,
  createScenario,
  expectedFor,
  FLAG,
  FLAG_KEYS,
  GROUP_TYPE,
} from './flagScenario.ts';

/**
 * Issue #9, "Done when" 2: posthog-js in a real headless Chromium, on a page of another origin, pointed at the server
 * by `api_host` only. 1.232.3 is the last release that asks `POST /decide/?v=3`; 1.449.2 asks `POST /flags/?v=2`.
 * Both also load the remote config (`/array/<token>/config.js`). Every request that would leave this machine is
 * aborted and must not happen.
 */
const releases = [
  {
    name: 'posthog-js-v1-decide',
    version: '1.232.3',
    flagsCall: /^POST \/decide\/\?v=3&/,
    notCalled: /^POST \/flags\//,
  },
  {
    name: 'posthog-js-v1',
    version: '1.449.2',
    flagsCall: /^POST \/flags\/\?v=2/,
    notCalled: /^POST \/decide\//,
  },
] as const;

const bundle = (pkg: string) =>
  fileURLToPath(new URL(`../../node_modules/${pkg}/dist/array.full.js`, import.meta.url));

let t: TestService;
let site: Site;
let browser: Browser;
const runHere = browserTestsRunHere();

beforeAll(async () => {
  if (!runHere) return;
  t = await startTestService();
  await createScenario(t, 2);
  site = await startSite(
    Object.fromEntries(releases.map((r) => [r.name, bundle(r.name)])),
    () => `
      const did = new URLSearchParams(location.search).get('did');
      window.__flagsLoaded = false;
      posthog.init(${JSON.stringify(t.projectApiKey)}, {
        api_host: ${JSON.stringify(t.url)},
        persistence: 'memory',
        bootstrap: { distinctID: did },
        autocapture: false,
        disable_session_recording: true,
        request_queue_config: { flush_interval_ms: 250 },
        // HeadlessChrome is on posthog-js's bot list: without this it captures nothing.
        opt_out_useragent_filter: true,
      });
      posthog.onFeatureFlags(() => { window.__flagsLoaded = true; });`,
  );
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await t?.close();
});

/** A distinct id that gets the rollout flag and the `test` variant, so the page reads values other than defaults. */
function pinnedId(release: string) {
  for (let n = 0; ; n++) {
    const distinctId = `browser-${release}-${n}`;
    const want = expectedFor({ distinctId, personProperties: {}, groups: {}, groupProperties: {} });
    if (want.flags[FLAG.rollout] === true && want.flags[FLAG.multivariate] === 'test')
      return { distinctId, want };
  }
}

describe.skipIf(!runHere).each(releases)('posthog-js $version in headless Chromium', (release) => {
  it('reads flags and payloads, then group and person-property flags; $pageview and $feature_flag_called arrive through /e/', async () => {
    const { distinctId, want } = pinnedId(release.version);
    const { context, blocked, exchanges } = await isolatedContext(browser);
    const page = await context.newPage();
    const consoleErrors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(String(e)));
    try {
      const pageUrl = `${site.url}/${release.name}/?did=${encodeURIComponent(distinctId)}`;
      await page.goto(pageUrl);
      await page.waitForFunction(() => (window as any).__flagsLoaded === true, undefined, {
        timeout: 10_000,
      });

      const read = await page.evaluate((F) => {
        const ph = (window as any).posthog;
        return {
          rollout: ph.isFeatureEnabled(F.rollout),
          variant: ph.getFeatureFlag(F.multivariate),
          variantPayload: ph.getFeatureFlagPayload(F.multivariate),
          json: ph.isFeatureEnabled(F.jsonPayload),
          jsonPayload: ph.getFeatureFlagPayload(F.jsonPayload),
          group: ph.isFeatureEnabled(F.group),
          targeted: ph.getFeatureFlag(F.targeted),
          distinctId: ph.get_distinct_id(),
          libVersion: ph.version ?? ph.LIB_VERSION,
        };
      }, FLAG);
      expect(read).toEqual({
        rollout: true,
        variant: 'test',
        variantPayload: want.payloads[FLAG.multivariate],
        json: true,
        jsonPayload: want.payloads[FLAG.jsonPayload],
        // no group passed: a group flag is off; no email or country known: the targeted flag is off
        group: false,
        targeted: false,
        distinctId,
        libVersion: release.version,
      });

      // A group (whose plan the server has stored) and a person property for flags: both reload the flags, and the
      // server decides the group flag from its stored group properties, the targeted one from the request's email.
      const email = 'someone@EXAMPLE.com';
      const later = expectedFor({
        distinctId,
        personProperties: { email },
        groups: { [GROUP_TYPE]: companyKey(0) },
        groupProperties: { [GROUP_TYPE]: { plan: 'enterprise' } },
      });
      expect(later.flags).toMatchObject({ [FLAG.group]: true, [FLAG.targeted]: true });
      await page.evaluate(
        ([type, key, mail]) => {
          const ph = (window as any).posthog;
          ph.group(type, key);
          ph.setPersonPropertiesForFlags({ email: mail });
        },
        [GROUP_TYPE, companyKey(0), email],
      );
      await page.waitForFunction(
        (F) => {
          const ph = (window as any).posthog;
          return (
            ph.getFeatureFlag(F.group, { send_event: false }) === true &&
            ph.getFeatureFlag(F.targeted, { send_event: false }) === true
          );
        },
        FLAG,
        { timeout: 10_000 },
      );
      const reread = await page.evaluate((F) => {
        const ph = (window as any).posthog;
        return { group: ph.isFeatureEnabled(F.group), targeted: ph.getFeatureFlag(F.targeted) };
      }, FLAG);
      expect(reread).toEqual({ group: true, targeted: true });

      // One $feature_flag_called per flag and value read: the five first reads, then group and targeted again.
      const calls = FLAG_KEYS.map((key) => [key, want.flags[key]] as const).concat([
        [FLAG.group, true],
        [FLAG.targeted, true],
      ]);
      const events = await readBackEvents(t, distinctId, {
        source: 'rest',
        timeoutMs: 15_000,
        until: (got) =>
          got.some((e) => e.event === '$pageview') &&
          got.filter((e) => e.event === '$feature_flag_called').length >= calls.length,
      });
      const pageview = events.find((e) => e.event === '$pageview')!;
      expect(pageview.properties).toMatchObject({
        $current_url: pageUrl,
        $lib: 'web',
        $lib_version: release.version,
      });
      const called = events
        .filter((e) => e.event === '$feature_flag_called')
        .map((e) => [e.properties.$feature_flag, e.properties.$feature_flag_response]);
      expect(new Set(called.map((c) => JSON.stringify(c)))).toEqual(
        new Set(calls.map((c) => JSON.stringify(c))),
      );
      expect(called).toHaveLength(calls.length);

      // The wire: the flags call this release is known for, the remote config, events through /e/, all answered.
      const api = exchanges
        .filter((x) => x.url.startsWith(t.url))
        .map((x) => ({ ...x, path: x.url.slice(t.url.length) }));
      const lines = api.map((x) => `${x.method} ${x.path} → ${x.status}`);
      expect(
        lines.filter((l) => release.flagsCall.test(l)).length,
        lines.join('\n'),
      ).toBeGreaterThan(0);
      expect(
        lines.filter((l) => release.notCalled.test(l)),
        lines.join('\n'),
      ).toEqual([]);
      expect(lines.some((l) => l.startsWith(`GET /array/${t.projectApiKey}/config.js`))).toBe(true);
      expect(
        lines.some((l) => /^POST \/e\//.test(l)),
        lines.join('\n'),
      ).toBe(true);
      expect(
        api
          .filter((x) => x.status === null || x.status >= 400)
          .map((x) => `${x.method} ${x.path} → ${x.status}`),
      ).toEqual([]);
      expect(blocked).toEqual([]);
      expect(consoleErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
