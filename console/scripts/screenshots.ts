import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { ensureConsole } from '../../scripts/ensureConsole.mjs';
import { loadConfig } from '../../src/config.ts';
import { createService } from '../../src/service.ts';

/**
 * `npm run console:screenshots`: a scratch server (embedded Postgres and chDB) with a few events captured through
 * /batch/, and a PNG of each console page into docs/console/ (linked from the README). Add a page here when it is
 * built.
 */
const OUT = new URL('../../docs/console/', import.meta.url);
const KEY = 'phx_screenshots_key_0001';
const PROJECT_KEY = 'phc_screenshots_key_0001';

type Shot = { file: string; path: string | ((page: Page) => Promise<string>); ready: string };
const SHOTS: Shot[] = [
  { file: 'sign-in.png', path: '/', ready: 'text=Personal API key' },
  { file: 'events.png', path: '/events', ready: 'main table' },
  {
    file: 'event.png',
    path: async (page) =>
      (await page.locator('main table a[href^="/events/"]').first().getAttribute('href'))!,
    ready: 'main h2',
  },
  {
    file: 'insights-trends.png',
    path: '/insights/trends?breakdown=plan&display=bar&point=0:7',
    ready: 'main .actors li',
  },
  {
    file: 'insights-funnels.png',
    path: '/insights/funnels?steps=invite_sent%2Csigned_up%2C%24pageview&persons=3',
    ready: 'main .actors li',
  },
  {
    file: 'insights-retention.png',
    path: '/insights/retention?cell=10:0',
    ready: 'main .actors li',
  },
  { file: 'persons.png', path: '/persons', ready: 'main table' },
  {
    file: 'person.png',
    path: async (page) =>
      (await page.locator('main table a[href^="/persons/"]').first().getAttribute('href'))!,
    ready: 'main h1',
  },
  { file: 'cohorts.png', path: '/cohorts', ready: 'main table' },
  { file: 'operations.png', path: '/operations', ready: 'main table' },
  { file: 'flags.png', path: '/feature_flags', ready: 'main table' },
  {
    file: 'flag.png',
    path: async (page) =>
      (await page.locator('main table a[href^="/feature_flags/"]').first().getAttribute('href'))!,
    ready: 'main .history-entry',
  },
];

if (process.argv.includes('--help')) {
  console.log(
    'npm run console:screenshots: PNGs of the console pages into docs/console/ (needs Chromium)',
  );
  process.exit(0);
}
ensureConsole();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-screenshots-'));
const service = await createService(
  loadConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'silent',
    INIT_PERSONAL_API_KEY: KEY,
    INIT_PROJECT_API_KEY: PROJECT_KEY,
  }),
);
const url = await service.app.listen({ port: 0, host: '127.0.0.1' });
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu'],
});
try {
  const people = ['ada@example.com', 'grace@example.com', 'linus@example.com'];
  const names = ['$pageview', 'signed_up', 'checkout_started', '$pageview', 'invite_sent'];
  const batch = names.flatMap((event, i) =>
    people.map((distinct_id, j) => ({
      event,
      distinct_id,
      timestamp: new Date(Date.now() - (i * 3 + j) * 60_000).toISOString(),
      properties: {
        $current_url: `https://shop.example/${event.replace('$', '')}`,
        $browser: 'Chrome',
        plan: j ? 'free' : 'pro',
        $set: { email: distinct_id, plan: j ? 'free' : 'pro' },
      },
    })),
  );
  const res = await fetch(`${url}/batch/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: PROJECT_KEY, batch }),
  });
  if (!res.ok) throw new Error(`/batch/ answered ${res.status}`);
  // A flag with two changes in its history, for the flag pages.
  const flags = `${url}/api/projects/@current/feature_flags/`;
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${KEY}` };
  const condition = (rollout: number) => ({
    groups: [
      {
        properties: [{ key: 'plan', type: 'person', operator: 'exact', value: ['pro'] }],
        rollout_percentage: rollout,
      },
    ],
  });
  const flag = await fetch(flags, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      key: 'checkout-redesign',
      name: 'New checkout',
      filters: condition(20),
    }),
  });
  if (!flag.ok) throw new Error(`creating a flag answered ${flag.status}`);
  const { id } = (await flag.json()) as { id: number };
  await fetch(`${flags}${id}/`, {
    method: 'PATCH',
    headers,
    body: JSON.stringify({ filters: condition(50) }),
  });
  // A dynamic cohort, for the cohorts page.
  const cohort = await fetch(`${url}/api/projects/@current/cohorts/`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      name: 'Pro customers',
      filters: {
        properties: {
          type: 'OR',
          values: [
            {
              type: 'AND',
              values: [{ key: 'plan', type: 'person', operator: 'exact', value: ['pro'] }],
            },
          ],
        },
      },
    }),
  });
  if (!cohort.ok) throw new Error(`creating a cohort answered ${cohort.status}`);
  fs.mkdirSync(OUT, { recursive: true });
  const page = await (
    await browser.newContext({ viewport: { width: 1280, height: 800 } })
  ).newPage();
  page.setDefaultTimeout(20_000);
  for (const shot of SHOTS) {
    if (shot.file !== 'sign-in.png')
      await page.evaluate((k) => sessionStorage.setItem('hogstream.personalApiKey', k), KEY);
    const target = typeof shot.path === 'string' ? shot.path : await shot.path(page);
    await page.goto(`${url}${target}`);
    await page.locator(shot.ready).first().waitFor();
    await page.screenshot({ path: new URL(shot.file, OUT).pathname, fullPage: false });
    console.log(`docs/console/${shot.file}`);
  }
} finally {
  await browser.close();
  await service.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
