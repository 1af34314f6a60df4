/**
 * bench/console: the console's built assets (raw, gzip, brotli) against the 400 KB budget, and its first load on
 * localhost in Chromium (navigation until the page is idle) against the 1 s budget.
 *   npm run bench:console [-- --url http://127.0.0.1:8000 --key phx_… --rounds 5]
 * Without --url it starts the server in-process on a scratch embedded Postgres and chDB. See docs/PERFORMANCE.md
 * "bench:console".
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import zlib from 'node:zlib';
import { chromium } from 'playwright-core';
import { ensureConsole } from '../scripts/ensureConsole.mjs';
import { consoleDir } from '../src/http/consoleRoutes.ts';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    key: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(`npm run bench:console [-- --url URL --key PERSONAL_KEY --rounds N]
  sizes of console/dist's assets (raw/gzip/brotli) and the first load time in Chromium (CHROMIUM_PATH).
  Without --url: an in-process server on a scratch embedded Postgres and chDB.`);
  process.exit(0);
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

function sizes() {
  ensureConsole();
  const dir = consoleDir();
  const files = [
    'index.html',
    ...fs
      .readdirSync(path.join(dir, 'assets'))
      .filter((f) => !/\.(br|gz)$/.test(f))
      .map((f) => `assets/${f}`),
  ];
  const total = { raw: 0, gzip: 0, brotli: 0 };
  console.log('| file | raw | gzip | brotli |\n| --- | ---: | ---: | ---: |');
  for (const file of files) {
    const raw = fs.readFileSync(path.join(dir, file));
    const row = {
      raw: raw.length,
      gzip: zlib.gzipSync(raw, { level: 9 }).length,
      brotli: zlib.brotliCompressSync(raw).length,
    };
    total.raw += row.raw;
    total.gzip += row.gzip;
    total.brotli += row.brotli;
    console.log(`| ${file} | ${kb(row.raw)} | ${kb(row.gzip)} | ${kb(row.brotli)} |`);
  }
  console.log(`| **all** | ${kb(total.raw)} | ${kb(total.gzip)} | ${kb(total.brotli)} |`);
  console.log(
    `budget: all assets < 400 KB compressed → ${total.gzip < 400 * 1024 ? 'met' : 'NOT met'}\n`,
  );
}

async function server(): Promise<{ url: string; key: string; close: () => Promise<void> }> {
  if (values.url) return { url: values.url, key: values.key ?? '', close: async () => {} };
  const { loadConfig } = await import('../src/config.ts');
  const { createService } = await import('../src/service.ts');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-bench-console-'));
  const key = 'phx_bench_console_key_0001';
  const service = await createService(
    loadConfig({
      DATA_DIR: dataDir,
      PORT: '0',
      LOG_LEVEL: 'silent',
      INIT_PERSONAL_API_KEY: key,
      INIT_PROJECT_API_KEY: 'phc_bench_console_0001',
    }),
  );
  const url = await service.app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url,
    key,
    close: async () => {
      await service.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function firstLoads() {
  const target = await server();
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
  try {
    const signIn: number[] = [];
    const events: number[] = [];
    for (let i = 0; i < Number(values.rounds); i++) {
      // A fresh context each round: nothing cached, as a first visit.
      const context = await browser.newContext();
      const page = await context.newPage();
      let t0 = performance.now();
      // 'load' (every asset and the script run), then the form on screen; networkidle would add Playwright's 500 ms quiet window.
      await page.goto(`${target.url}/events`, { waitUntil: 'load' });
      await page.getByLabel('Personal API key').waitFor();
      signIn.push(performance.now() - t0);
      if (target.key) {
        await page.evaluate(
          (k) => sessionStorage.setItem('hogstream.personalApiKey', k),
          target.key,
        );
        t0 = performance.now();
        await page.reload();
        await page.locator('main#main table, main#main .state.empty').first().waitFor();
        events.push(performance.now() - t0);
      }
      await context.close();
    }
    console.log(
      `first load, navigation until the sign-in form is on screen: median ${median(signIn).toFixed(0)} ms (${signIn.map((x) => x.toFixed(0)).join(', ')})`,
    );
    if (events.length)
      console.log(
        `signed in, /events until its table (key check, projects, events): median ${median(events).toFixed(0)} ms`,
      );
    console.log(`budget: first load < 1 s → ${median(signIn) < 1000 ? 'met' : 'NOT met'}`);
  } finally {
    await browser.close();
    await target.close();
  }
}

sizes();
await firstLoads();
