import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtConsole } from '../console/builtConsole.ts';
import { newUser } from '../http/helpers.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { browserTestsRunHere } from './browser.ts';
import { captureBatch, openConsolePage, seriousViolations } from './consolePage.ts';

/**
 * Issue #30: the console's Operations and Cohorts pages in Debian's Chromium against a real server. A rebuild started
 * from Operations shows its progress and ends; a dynamic cohort made from a person property filter and a static one
 * from a CSV upload list their members; a read-only key sees no "New cohort"; axe-core on every page.
 */
const runHere = browserTestsRunHere();
let t: TestService;
let browser: Browser;
let page: Page;
let blocked: string[];

async function signIn(key: string) {
  await page.goto(`${t.url}/operations`);
  await page.getByLabel('Personal API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}

beforeAll(async () => {
  if (!runHere) return;
  builtConsole();
  t = await startTestService();
  await captureBatch(t.url, t.projectApiKey, [
    { event: 'signed_up', distinct_id: 'ada', properties: { $set: { plan: 'pro' } } },
    { event: 'signed_up', distinct_id: 'grace', properties: { $set: { plan: 'free' } } },
    { event: 'signed_up', distinct_id: 'linus', properties: { $set: { plan: 'free' } } },
  ]);
  ({ browser, page, blocked } = await openConsolePage());
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe.skipIf(!runHere)('console: operations and cohorts', () => {
  it("shows each read model's position and lag, and the ingestion warnings", async () => {
    await signIn(t.personalApiKey);
    await page.getByRole('heading', { name: 'Operations', level: 1 }).waitFor();
    const models = page.getByRole('table', { name: "Read models against the log's head" });
    await models.getByRole('rowheader', { name: 'clickhouse:events' }).waitFor();
    await models.getByRole('rowheader', { name: 'persons' }).waitFor();
    await page.getByText('No parked events').waitFor();
    await page.getByText('No ingestion warnings in this project for the last 30 days').waitFor();
    await page.getByLabel('Period').selectOption('7');
    await expect.poll(() => new URL(page.url()).search).toBe('?days=7');
    await page.getByText('for the last 7 days').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('starts a rebuild, shows its progress, and it ends', async () => {
    await page.getByText('No rebuild has been started').waitFor();
    const start = page.getByRole('button', { name: 'Rebuild events read models' });
    await start.click();
    const rebuilds = page.getByRole('table', { name: 'Rebuilds, newest first' });
    const row = rebuilds.getByRole('row', { name: /#\d+/ });
    // While it is under way: its status, and the button is off (one rebuild at a time).
    await expect.poll(() => row.textContent(), { timeout: 5_000 }).toMatch(/Queued|Running/);
    expect(await start.isDisabled()).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    await expect.poll(() => row.textContent(), { timeout: 30_000 }).toMatch(/Finished/);
    const progress = row.getByRole('progressbar');
    expect(await progress.getAttribute('value')).toBe('1');
    expect(await row.textContent()).toContain('100%');
    expect(await start.isEnabled()).toBe(true);
  });

  it('creates a dynamic cohort from a person property filter and lists its members', async () => {
    await page.getByRole('link', { name: 'Cohorts', exact: true }).click();
    await page.getByText('No cohorts in this project yet').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('link', { name: 'New cohort' }).click();
    await page.getByLabel('Name').fill('Free plan');
    await page.getByLabel('Person property').fill('plan');
    await page.getByLabel('Value').fill('free');
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Create cohort' }).click();
    await page.getByRole('heading', { name: 'Free plan', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toMatch(/^\/cohorts\/\d+$/);
    const members = page.getByRole('table', { name: 'Members' });
    await members.getByRole('link', { name: 'grace' }).waitFor({ timeout: 15_000 });
    await members.getByRole('link', { name: 'linus' }).waitFor();
    expect(await members.getByRole('row').count()).toBe(3); // header + 2: ada is on pro
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('creates a static cohort from a CSV upload, and the list and back button show both', async () => {
    await page.getByRole('link', { name: '← All cohorts' }).click();
    await page.getByRole('link', { name: 'New cohort' }).click();
    await page.getByLabel('Name').fill('Beta testers');
    await page.getByLabel(/Static/).check();
    await page.getByLabel('CSV file of distinct ids').setInputFiles({
      name: 'beta.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('distinct_id\nada\n'),
    });
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Create cohort' }).click();
    await page.getByRole('heading', { name: 'Beta testers', level: 1 }).waitFor();
    const members = page.getByRole('table', { name: 'Members' });
    await members.getByRole('link', { name: 'ada' }).waitFor();
    expect(await members.getByRole('row').count()).toBe(2);

    await page.getByRole('link', { name: '← All cohorts' }).click();
    const list = page.getByRole('table', { name: 'Cohorts' });
    await list.getByRole('link', { name: 'Beta testers' }).waitFor();
    expect(await list.getByRole('row', { name: /Free plan/ }).textContent()).toContain('Dynamic');
    expect(await list.getByRole('row', { name: /Beta testers/ }).textContent()).toContain('Static');
    expect(await seriousViolations(page)).toEqual([]);
    await page.goBack();
    await page.getByRole('heading', { name: 'Beta testers', level: 1 }).waitFor();
  });

  it('shows a read-only key no "New cohort"', async () => {
    const { key } = await newUser(t, { scopes: ['cohort:read'] });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(key);
    await page.getByRole('link', { name: 'Cohorts', exact: true }).click();
    await page
      .getByRole('table', { name: 'Cohorts' })
      .getByRole('link', { name: 'Free plan' })
      .waitFor();
    expect(await page.getByRole('link', { name: 'New cohort' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Operations', exact: true }).count()).toBe(0);
    expect(blocked).toEqual([]);
  });
});
