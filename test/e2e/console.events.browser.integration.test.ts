import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtConsole } from '../console/builtConsole.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { browserTestsRunHere } from './browser.ts';
import { captureBatch, openConsolePage, seriousViolations } from './consolePage.ts';

/**
 * Issue #30: the console in Debian's Chromium against a real server. Sign in with a personal key, pick the project,
 * see the events captured through /batch/, see a new one appear without reloading, open its detail; axe-core on
 * every page visited.
 */
const runHere = browserTestsRunHere();
let t: TestService;
let browser: Browser;
let page: Page;
let blocked: string[];

beforeAll(async () => {
  if (!runHere) return;
  builtConsole();
  t = await startTestService();
  await captureBatch(t.url, t.projectApiKey, [
    {
      event: 'signed_up',
      distinct_id: 'ada',
      properties: { plan: 'pro', $current_url: 'https://shop.test/join' },
    },
    {
      event: '$pageview',
      distinct_id: 'grace',
      properties: { $current_url: 'https://shop.test/' },
    },
  ]);
  // The list reads ClickHouse: wait until both are there, as the page would see them.
  for (let i = 0; i < 100; i++) {
    const list = await t.api('GET', `/api/projects/${t.projectId}/events/`);
    if (list.body.results?.length >= 2) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  ({ browser, page, blocked } = await openConsolePage());
  // A step that fails says which, well inside the test's own timeout.
  page.setDefaultTimeout(10_000);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe.skipIf(!runHere)('console: events', () => {
  it('signs in with a personal API key, and refuses a wrong one with the reason', async () => {
    await page.goto(`${t.url}/events`);
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByLabel('Personal API key').fill('phx_not_a_key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(/key/i);

    await page.getByLabel('Personal API key').fill(t.personalApiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    const project = page.getByLabel('Project');
    await expect.poll(() => project.inputValue()).toBe(String(t.projectId));
    for (const name of ['Events', 'Persons', 'Feature flags', 'Insights', 'Cohorts', 'Operations'])
      expect(await page.getByRole('link', { name, exact: true }).count(), name).toBe(1);
  });

  it('lists the captured events and shows a new one within 2 s without reloading', async () => {
    const table = page.getByRole('table');
    await table.getByRole('link', { name: 'signed_up' }).waitFor();
    await table.getByRole('link', { name: '$pageview' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    let reloaded = false;
    page.once('load', () => {
      reloaded = true;
    });
    await captureBatch(t.url, t.projectApiKey, [
      { event: 'checkout_started', distinct_id: 'ada', properties: { cart: 3 } },
    ]);
    // From capture's 200 (the event is accepted) to the row on screen.
    const sent = Date.now();
    await table.getByRole('link', { name: 'checkout_started' }).waitFor({ timeout: 2_000 });
    expect(Date.now() - sent).toBeLessThan(2_000);
    expect(reloaded).toBe(false);
  });

  it('filters by event name in the URL, and the back button restores the list', async () => {
    await page.getByLabel('Event name').fill('signed_up');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => new URL(page.url()).search).toBe('?event=signed_up');
    await expect.poll(() => page.getByRole('table').getByRole('row').count()).toBe(2); // header + 1
    await page.goBack();
    await page.getByRole('table').getByRole('link', { name: 'checkout_started' }).waitFor();
  });

  it("opens an event's detail with its properties and a link to its person", async () => {
    await page.getByRole('table').getByRole('link', { name: 'signed_up' }).click();
    await page.getByRole('heading', { name: 'signed_up', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toMatch(/^\/events\/[0-9a-f-]{36}$/);
    expect(await page.getByRole('row', { name: /plan/ }).textContent()).toContain('pro');
    expect(await page.getByRole('link', { name: 'ada' }).getAttribute('href')).toBe('/persons/ada');
    expect(await seriousViolations(page)).toEqual([]);

    // A reload of the bookmarked URL opens the same event (the key is kept for the tab's session).
    await page.reload();
    await page.getByRole('heading', { name: 'signed_up', level: 1 }).waitFor();
  });

  it('signs out, forgetting the key', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Personal API key').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(blocked).toEqual([]);
  });
});
