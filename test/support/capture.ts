import { expect } from 'vitest';
import { type CaptureResponse, sendRaw } from './captureClient.ts';

/** Where to capture: a running server and a project API key (a TestService is one). */
export type CaptureTarget = Readonly<{ url: string; projectApiKey: string }>;

/**
 * The one way suites that are not about capture itself send events: `POST /batch/` with the
 * posthog-node envelope `{api_key, batch}`, insisting on 200. The events of one request are
 * ordered per distinct id only, so steps that must be ordered in the log are separate calls.
 * The capture suites send exact bytes with `sendRaw` (captureClient.ts) instead.
 */
export async function capture(
  target: CaptureTarget,
  batch: readonly unknown[],
  options: { apiKey?: string } = {},
): Promise<CaptureResponse> {
  const body = JSON.stringify({ api_key: options.apiKey ?? target.projectApiKey, batch });
  const res = await sendRaw(target.url, {
    path: '/batch/',
    headers: { 'content-type': 'application/json' },
    body,
  });
  expect(res.status, res.text).toBe(200);
  return res;
}
