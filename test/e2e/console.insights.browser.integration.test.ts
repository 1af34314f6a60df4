import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtConsole } from '../console/builtConsole.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { browserTestsRunHere } from './browser.ts';
import { captureBatch, openConsolePage, seriousViolations } from './consolePage.ts';

/**
 * Issue #30, Insights: trends, funnels and retention in Debian's Chromium against a real server, from events captured
 * through /batch/. A trend chart's point (clicked on the canvas) lists its persons; a funnel step and a retention
 * cell list theirs; the parameters live in the URL (a reload keeps them, the back button undoes them); axe-core
 * finds nothing serious or critical on each page.
 */
const runHere = browserTestsRunHere();
let t: TestService;
let browser: Browser;
let page: Page;
let blocked: string[];

const people = () =>
  page
    .getByRole('region', { name: /^Persons:/ })
    .getByRole('listitem')
    .allTextContents()
    .then((names) => names.sort());

beforeAll(async () => {
  if (!runHere) return;
  builtConsole();
  t = await startTestService();
  await captureBatch(t.url, t.projectApiKey, [
    { event: '$pageview', distinct_id: 'ada', properties: { plan: 'pro' } },
    { event: '$pageview', distinct_id: 'grace', properties: { plan: 'free' } },
    { event: '$pageview', distinct_id: 'linus', properties: { plan: 'pro' } },
    { event: 'signed_up', distinct_id: 'ada', properties: { plan: 'pro' } },
    { event: 'signed_up', distinct_id: 'grace', properties: { plan: 'free' } },
  ]);
  for (let i = 0; i < 100; i++) {
    const list = await t.api('GET', `/api/projects/${t.projectId}/events/`);
    if (list.body.results?.length >= 5) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  ({ browser, page, blocked } = await openConsolePage());
  await page.goto(`${t.url}/insights`);
  await page.getByLabel('Personal API key').fill(t.personalApiKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe.skipIf(!runHere)('console: insights', () => {
  it("draws a trend, and a click on the chart's point lists its persons", async () => {
    await page.getByRole('heading', { name: 'Insights: Trends', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/insights/trends');
    // today's point is the last one of the default -7d by day: the three persons' pageviews
    const today = page.getByRole('button', { name: /^3: persons of \$pageview, / });
    await today.waitFor();
    const over = page.locator('.trend-chart .u-over');
    await over.waitFor();
    const box = (await over.boundingBox())!;
    await over.click({ position: { x: box.width - 2, y: box.height / 2 } });
    await page.getByRole('heading', { name: /^Persons: \$pageview, .* \(3\)$/ }).waitFor();
    await expect.poll(people).toEqual(['ada', 'grace', 'linus']);
    expect(await page.getByRole('link', { name: 'ada' }).getAttribute('href')).toBe('/persons/ada');
    expect(new URL(page.url()).searchParams.get('point')).toBe('0:7');
    expect(await seriousViolations(page)).toEqual([]);

    // the point is in the URL: a reload lists the same persons
    await page.reload();
    await page.getByRole('heading', { name: /^Persons: \$pageview, .* \(3\)$/ }).waitFor();
    await expect.poll(people).toEqual(['ada', 'grace', 'linus']);
  });

  it('breaks a trend down by a property in the URL, and the back button undoes it', async () => {
    await page.getByLabel('Breakdown by').fill('plan');
    await page.getByLabel('Chart').selectOption('bar');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('breakdown')).toBe('plan');
    await page.getByRole('button', { name: /^2: persons of \$pageview - pro, / }).click();
    await expect.poll(people).toEqual(['ada', 'linus']);

    // bars are grouped per interval: the right half of today's group is "free"
    const over = page.locator('.trend-chart .u-over');
    const box = (await over.boundingBox())!;
    await over.click({ position: { x: (box.width * 7.7) / 8, y: box.height - 5 } });
    await page.getByRole('heading', { name: /^Persons: \$pageview - free, .* \(1\)$/ }).waitFor();
    await expect.poll(people).toEqual(['grace']);
    expect(await seriousViolations(page)).toEqual([]);

    await page.goBack(); // the bar
    await page.goBack(); // the table's point
    await page.goBack(); // the breakdown
    await expect.poll(() => new URL(page.url()).searchParams.get('breakdown')).toBe(null);
    await page.getByRole('button', { name: /^3: persons of \$pageview, / }).waitFor();
  });

  it('shows a funnel with conversion and drop-off, and who dropped off', async () => {
    await page.getByRole('link', { name: 'Funnels' }).click();
    await page.getByText('Name at least two steps').waitFor();
    await page.getByLabel('Steps (event names, comma-separated)').fill('$pageview, signed_up');
    await page.getByRole('button', { name: 'Apply' }).click();
    const second = page.getByRole('row', { name: /2\. signed_up/ });
    await second.waitFor();
    expect(await second.textContent()).toContain('66.7%');
    await page.getByRole('button', { name: '1: persons who dropped off before signed_up' }).click();
    await expect.poll(people).toEqual(['linus']);
    await page.getByRole('button', { name: '2: persons who reached signed_up' }).click();
    await expect.poll(people).toEqual(['ada', 'grace']);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('shows the retention cohort table, and a cell lists its persons', async () => {
    await page.getByRole('link', { name: 'Retention' }).click();
    await page.getByRole('heading', { name: 'Insights: Retention', level: 1 }).waitFor();
    // today's cohort is the last row: its size cell
    const size = page.getByRole('button', { name: /^3: persons of cohort .* back after 0$/ });
    await size.click();
    await expect.poll(people).toEqual(['ada', 'grace', 'linus']);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('states a bad parameter as the API explains it', async () => {
    await page.goto(`${t.url}/insights/trends?interval=fortnight`);
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(/interval/);
    expect(await seriousViolations(page)).toEqual([]);
    expect(blocked).toEqual([]);
  });
});
