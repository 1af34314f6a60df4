import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtConsole } from '../console/builtConsole.ts';
import { newRole } from '../http/helpers.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { browserTestsRunHere, isolatedContext, launchChromium } from './browser.ts';
import { captureBatch, seriousViolations } from './consolePage.ts';

/**
 * Issue #30, feature flags in the console, in Debian's Chromium against a real server: create a flag, see the API's
 * 400 beside the field, edit its rollout and find it in /decide and as a new history entry, the flag as of an older
 * moment, evaluation for a distinct id, the usage dashboard, and a read-only key without edit buttons.
 */
const runHere = browserTestsRunHere();
const KEY = 'checkout-redesign';
let t: TestService;
let browser: Browser;
let page: Page;
let readOnlyKey: string;

/** What /decide answers an SDK for this distinct id, as posthog-js asks it. */
async function decide(distinctId: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${t.url}/decide/?v=3`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: t.projectApiKey, distinct_id: distinctId }),
  });
  return ((await res.json()) as { featureFlags: Record<string, unknown> }).featureFlags;
}

async function signIn(key: string) {
  await page.goto(`${t.url}/feature_flags`);
  await page.getByLabel('Personal API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Feature flags', level: 1 }).waitFor();
}

beforeAll(async () => {
  if (!runHere) return;
  builtConsole();
  t = await startTestService();
  await captureBatch(t.url, t.projectApiKey, [
    { event: '$pageview', distinct_id: 'ada', properties: { plan: 'pro' } },
    {
      event: '$groupidentify',
      distinct_id: 'ada',
      properties: {
        $group_type: 'company',
        $group_key: 'acme',
        $group_set: { plan: 'enterprise' },
      },
    },
    {
      event: '$feature_flag_called',
      distinct_id: 'ada',
      properties: { $feature_flag: KEY, $feature_flag_response: false },
    },
  ]);
  const created = await t.api('POST', '/api/personal_api_keys/', {
    label: 'read only',
    scopes: ['feature_flag:read', 'project:read'],
  });
  expect(created.status).toBe(201);
  readOnlyKey = created.body.value;
  browser = await launchChromium();
  page = await (await isolatedContext(browser)).context.newPage();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe.skipIf(!runHere)('console: feature flags', () => {
  it('creates a flag, showing the API 400 beside the field it names', async () => {
    await signIn(t.personalApiKey);
    await page.getByText('No feature flags yet').waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    await page.getByRole('link', { name: 'New flag' }).click();
    await page.getByRole('heading', { name: 'New feature flag' }).waitFor();
    await page.getByLabel('Key').fill(KEY);
    await page.getByLabel('Rollout % (condition 1)').fill('150');
    await page.getByRole('button', { name: 'Create flag' }).click();
    const error = page.locator('#err-condition-0');
    await error.waitFor();
    expect(await error.textContent()).toContain('between 0 and 100');
    expect(await page.getByLabel('Rollout % (condition 1)').getAttribute('aria-describedby')).toBe(
      'err-condition-0',
    );
    expect(await seriousViolations(page)).toEqual([]);

    await page.getByLabel('Rollout % (condition 1)').fill('0');
    await page.getByRole('button', { name: 'Create flag' }).click();
    await page.getByRole('heading', { name: KEY, level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toMatch(/^\/feature_flags\/\d+$/);
    expect(await decide('ada')).toMatchObject({ [KEY]: false });
  });

  it("editing the rollout shows up in /decide and as a new entry in the flag's history", async () => {
    await page
      .getByRole('list', { name: 'Changes, newest first' })
      .getByRole('listitem')
      .first()
      .waitFor();
    const entries = page.getByRole('list', { name: 'Changes, newest first' }).getByRole('listitem');
    expect(await entries.count()).toBe(1);

    await page.getByRole('link', { name: 'Edit flag' }).click();
    await page.getByLabel('Rollout % (condition 1)').fill('100');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { name: KEY, level: 1 }).waitFor();
    await expect.poll(() => entries.count()).toBe(2);

    const newest = entries.first();
    expect(await newest.textContent()).toMatch(/updated/);
    const change = newest.getByRole('row', { name: /groups\[0\]\.rollout_percentage/ });
    expect((await change.textContent())?.replace(/\s+/g, ' ')).toContain('0100');
    expect(await decide('ada')).toMatchObject({ [KEY]: true });
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('evaluates the flag for a distinct id with the reason', async () => {
    await page.getByRole('textbox', { name: 'Distinct id' }).fill('ada');
    await page.getByRole('button', { name: 'Evaluate' }).click();
    const result = page.locator('output.evaluation');
    await result.waitFor();
    expect(await result.textContent()).toMatch(/true.*condition match.*condition 1/);
  });

  it('shows the flag as of an older change, from its history', async () => {
    const entries = page.getByRole('list', { name: 'Changes, newest first' }).getByRole('listitem');
    await entries.last().getByRole('link', { name: 'The flag after this change' }).click();
    await page.getByRole('heading', { name: /as of/, level: 1 }).waitFor();
    expect(new URL(page.url()).searchParams.get('as_of')).not.toBeNull();
    expect(await page.locator('.facts').first().textContent()).toContain('0% of persons');
    expect(await page.getByRole('link', { name: 'Edit flag' }).count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await page.goBack();
    await page.getByRole('button', { name: 'Create usage dashboard' }).waitFor();
  });

  it("creates the usage dashboard and charts the flag's calls", async () => {
    await page.getByRole('button', { name: 'Create usage dashboard' }).click();
    await page.locator('figure.usage-tile').first().waitFor();
    expect(await page.locator('figure.usage-tile figcaption').first().textContent()).toMatch(
      /Feature Flag Called/,
    );
    await page.locator('figure.usage-tile canvas').first().waitFor();
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('grants a role editing the flag, listed under who may edit and as a history entry', async () => {
    const roleId = await newRole(t, 37, []);
    await page.getByText('No roles set').waitFor();
    await page.getByLabel('Role id (UUID)').fill(roleId);
    await page.getByRole('button', { name: 'Grant editing' }).click();
    await page.getByRole('button', { name: /^Remove role/ }).waitFor();
    const entries = page.getByRole('list', { name: 'Changes, newest first' }).getByRole('listitem');
    await expect.poll(() => entries.first().textContent()).toMatch(/role access added/);
  });

  it('creates a group flag with variants and a payload', async () => {
    await page.getByRole('link', { name: 'Feature flags', exact: true }).click();
    await page.getByRole('link', { name: 'New flag' }).click();
    await page.getByLabel('Key').fill('company-beta');
    await page.getByLabel('Match by').selectOption({ label: 'Groups: company' });
    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByLabel('Type').selectOption('group');
    await page.getByLabel('Property', { exact: true }).fill('plan');
    await page.getByLabel('Value').fill('enterprise');
    await page.getByRole('button', { name: 'Add variant' }).click();
    await page.getByRole('button', { name: 'Add variant' }).click();
    await page.getByLabel('Variant 1 key').fill('control');
    await page.getByLabel('Variant 1 split %').fill('50');
    await page.getByLabel('Variant 2 key').fill('test');
    await page.getByLabel('Variant 2 split %').fill('50');
    await page.getByLabel('Payload when “test”').fill('{"color":"green"}');
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Create flag' }).click();
    await page.getByRole('heading', { name: 'company-beta', level: 1 }).waitFor();

    const id = new URL(page.url()).pathname.split('/').pop();
    const { body } = await t.api('GET', `/api/projects/${t.projectId}/feature_flags/${id}/`);
    expect(body.filters).toMatchObject({
      aggregation_group_type_index: 0,
      groups: [
        {
          properties: [{ key: 'plan', type: 'group', value: ['enterprise'], group_type_index: 0 }],
          rollout_percentage: 100,
        },
      ],
      multivariate: { variants: [{ key: 'control', rollout_percentage: 50 }, { key: 'test' }] },
      payloads: { test: '{"color":"green"}' },
    });
    expect(await page.locator('.facts').first().textContent()).toContain('control, test');
  });

  it('lists the flag with its status and rollout; a read-only key sees no edit buttons', async () => {
    await page.getByRole('link', { name: 'Feature flags', exact: true }).click();
    const row = page.getByRole('row', { name: new RegExp(KEY) });
    await row.waitFor();
    expect(await row.textContent()).toMatch(/Enabled.*100% of persons/);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(readOnlyKey);
    await page.getByRole('link', { name: KEY }).click();
    await page.getByRole('heading', { name: KEY, level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'History' }).waitFor();
    expect(await page.getByRole('link', { name: 'New flag' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Edit flag' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Grant editing' }).count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);

    // `/flags/:id` (a link's short form) opens the flag's page; a flag that is not there says so.
    const id = new URL(page.url()).pathname.split('/').pop();
    await page.goto(`${t.url}/flags/${id}`);
    await page.getByRole('heading', { name: KEY, level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/feature_flags/${id}`);
    await page.goto(`${t.url}/feature_flags/999999`);
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(/not found/i);
  });
});
