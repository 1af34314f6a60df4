import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtConsole } from '../console/builtConsole.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { browserTestsRunHere } from './browser.ts';
import { openConsolePage, seriousViolations } from './consolePage.ts';

/**
 * Issue #30, Persons: search, a person's page (properties, distinct ids, cohorts, events, audit trail) and time
 * travel: the time control shows an older property value at an older time, and each property's changes name the
 * event that set it. Data captured through /batch/ with timestamps in the past, as an SDK flushing a queue does.
 */
const runHere = browserTestsRunHere();
const DAY = 86_400_000;
const now = Date.now();
const at = (daysAgo: number) => new Date(now - daysAgo * DAY).toISOString();
let t: TestService;
let browser: Browser;
let page: Page;
let blocked: string[];
let adaUuid: string;

async function capture(
  events: { event: string; distinct_id: string; timestamp: string; properties: object }[],
) {
  const res = await fetch(`${t.url}/batch/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: t.projectApiKey, batch: events }),
  });
  expect(res.status).toBe(200);
}

/** The browser's local time for an instant, as a datetime-local input takes it. */
const localTimeInPage = (iso: string) =>
  page.evaluate((value) => {
    const d = new Date(value);
    const pad = (n: number) => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  }, iso);

const propertyValue = (caption: RegExp, key: string) =>
  page
    .getByRole('table', { name: caption })
    .getByRole('row', { name: new RegExp(`^${key}\\b`) })
    .getByRole('cell')
    .textContent();

beforeAll(async () => {
  if (!runHere) return;
  builtConsole();
  t = await startTestService();
  await capture([
    {
      event: 'signed_up',
      distinct_id: 'ada',
      timestamp: at(3),
      properties: { $set: { plan: 'free', email: 'ada@shop.test' } },
    },
    {
      event: 'upgraded',
      distinct_id: 'ada',
      timestamp: at(1),
      properties: { $set: { plan: 'pro' } },
    },
    { event: '$pageview', distinct_id: 'grace', timestamp: at(1), properties: {} },
  ]);
  // Persons are a read model, events are in ClickHouse: wait until the page would see both.
  for (let i = 0; i < 100; i++) {
    const persons = await t.api('GET', `/api/projects/${t.projectId}/persons/?distinct_id=ada`);
    const ada = persons.body.results?.[0];
    const events = await t.api('GET', `/api/projects/${t.projectId}/events/?distinct_id=ada`);
    if (ada?.properties.plan === 'pro' && events.body.results?.length === 2) {
      adaUuid = ada.uuid;
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  // A change through the API, for the audit trail (who changed what).
  const set = await t.api(
    'POST',
    `/api/projects/${t.projectId}/persons/${adaUuid}/update_property/`,
    { key: 'vip', value: true },
  );
  expect(set.status).toBe(200);
  ({ browser, page, blocked } = await openConsolePage());
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe.skipIf(!runHere)('console: persons', () => {
  it('searches persons and opens one', async () => {
    await page.goto(`${t.url}/persons`);
    await page.getByLabel('Personal API key').fill(t.personalApiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('table').getByRole('link', { name: 'ada@shop.test' }).waitFor();
    expect(await page.getByRole('table').getByRole('row').count()).toBe(3); // header + ada + grace
    expect(await seriousViolations(page)).toEqual([]);

    await page.getByLabel('Search persons').fill('ADA@shop');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => new URL(page.url()).search).toBe('?search=ADA%40shop');
    await expect.poll(() => page.getByRole('table').getByRole('row').count()).toBe(2);
    await page.getByLabel('Search persons').fill('nobody');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No person matches “nobody”.').waitFor();
    await page.goBack();
    await page.getByRole('table').getByRole('link', { name: 'ada@shop.test' }).click();
    await page.getByRole('heading', { name: 'ada@shop.test', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/persons/${adaUuid}`);
  });

  it("shows the person's properties, distinct ids, events and audit trail", async () => {
    expect(await propertyValue(/^Properties now/, 'plan')).toBe('pro');
    const ids = page.getByRole('region', { name: 'Distinct ids' });
    expect(await ids.getByRole('listitem').allTextContents()).toEqual(['ada']);
    await page.getByRole('region', { name: 'Cohorts' }).getByText('In no cohort.').waitFor();
    const events = page.getByRole('region', { name: 'Events' });
    await events.getByRole('link', { name: 'upgraded' }).waitFor();
    await events.getByRole('link', { name: 'signed_up' }).waitFor();
    const audit = page.getByRole('region', { name: 'Audit trail' });
    const entry = audit.getByRole('row', { name: /vip/ });
    await entry.waitFor();
    expect(await entry.textContent()).toMatch(/updated.*vip: null → true/);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('time travel: the time control shows the older value at an older time, and the timeline names the events', async () => {
    const timeline = page.getByRole('table', { name: /^Property changes/ });
    const planRows = timeline.getByRole('row', { name: /^plan\b/ });
    await expect.poll(() => planRows.count()).toBe(2);
    expect(await planRows.nth(0).textContent()).toMatch(/free.*pro.*upgraded/);
    expect(await planRows.nth(1).textContent()).toMatch(/not set.*free.*signed_up/);

    await page.getByLabel('As of (your local time)').fill(await localTimeInPage(at(2)));
    await page.getByRole('button', { name: 'Show as of' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('as_of')).not.toBeNull();
    await expect.poll(() => propertyValue(/^Properties as of/, 'plan')).toBe('free');
    expect(await page.getByRole('table', { name: /^Properties as of/ }).textContent()).not.toMatch(
      /vip/,
    );
    expect(await seriousViolations(page)).toEqual([]);

    // A reload of the bookmarked moment shows the same; the back button returns to now.
    await page.reload();
    await expect.poll(() => propertyValue(/^Properties as of/, 'plan')).toBe('free');
    await page.goBack();
    await expect.poll(() => propertyValue(/^Properties now/, 'plan')).toBe('pro');

    // A change's time is a moment to travel to: the upgrade shows pro.
    await planRows
      .nth(0)
      .getByRole('link', { name: /^As of/ })
      .click();
    await expect.poll(() => propertyValue(/^Properties as of/, 'plan')).toBe('pro');

    // Before the first event the person did not exist.
    await page.getByLabel('As of (your local time)').fill(await localTimeInPage(at(4)));
    await page.getByRole('button', { name: 'Show as of' }).click();
    await page.getByText(/this person did not exist yet/).waitFor();
  });

  it("opens a person by distinct id (the events page's links) and says plainly when nobody has it", async () => {
    await page.goto(`${t.url}/persons/ada`);
    await page.getByRole('heading', { name: 'ada@shop.test', level: 1 }).waitFor();
    await page.goto(`${t.url}/persons/nobody`);
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain(
      'No person has the id or distinct id “nobody”',
    );
    expect(await seriousViolations(page)).toEqual([]);
    expect(blocked).toEqual([]);
  });
});
