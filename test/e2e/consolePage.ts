import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { isolatedContext, launchChromium } from './browser.ts';

const axeSource = fs.readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);

export type Violation = { id: string; impact: string | null; help: string; nodes: number };

/** axe-core in the page as it is now: the serious and critical violations (WCAG 2 A/AA rules). */
export async function seriousViolations(page: Page): Promise<Violation[]> {
  if (!(await page.evaluate(() => 'axe' in window)))
    await page.addScriptTag({ content: axeSource });
  return page.evaluate(async () => {
    const axe = (window as any).axe;
    const result = await axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'best-practice'] });
    return result.violations
      .filter((v: { impact: string | null }) => v.impact === 'serious' || v.impact === 'critical')
      .map((v: { id: string; impact: string | null; help: string; nodes: unknown[] }) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.length,
      }));
  });
}

/** Events captured through `/batch/`, as an SDK sends them. */
export async function captureBatch(
  url: string,
  apiKey: string,
  events: { event: string; distinct_id: string; properties?: Record<string, unknown> }[],
): Promise<void> {
  const res = await fetch(`${url}/batch/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      api_key: apiKey,
      batch: events.map((e) => ({
        ...e,
        properties: e.properties ?? {},
        timestamp: new Date().toISOString(),
      })),
    }),
  });
  if (!res.ok) throw new Error(`/batch/ answered ${res.status}: ${await res.text()}`);
}

/**
 * Chromium and one page in a context that reaches only the server under test; `blocked` lists every
 * request it refused elsewhere (a console page must load nothing from other sites).
 */
export async function openConsolePage(): Promise<{
  browser: Browser;
  page: Page;
  blocked: string[];
}> {
  const browser = await launchChromium();
  const { context, blocked } = await isolatedContext(browser);
  return { browser, page: await context.newPage(), blocked };
}
