import fs from 'node:fs';

/** A case of test/fixtures/capture_cases.json (its README says where they come from). */
export type CaptureCase = {
  name: string;
  server: string;
  method: string;
  path: string;
  query?: string;
  headers: Record<string, string>;
  body: string;
  body_base64?: string;
  body_expand?: Record<string, { char: string; count: number }>;
  expected_status: number;
  expected_status_here?: number;
  expected_body_contains?: string;
  expected_json?: { type: string; code: string; detail: string; attr: string | null };
  notes?: string;
};

export const captureCases: CaptureCase[] = JSON.parse(
  fs.readFileSync(new URL('../fixtures/capture_cases.json', import.meta.url), 'utf8'),
);

/**
 * Decision 6: the cases' tokens stand for valid project keys. PostHog's Rust tests use random ones
 * and posthog-js requests carry real-looking `phc_` keys, so every token the accepted cases carry
 * is listed here.
 */
export const CAPTURE_CASE_TOKENS = [
  'token123',
  'token-8df3a1',
  't1',
  'single_token',
  'KZZZeIpycLH-tKobLBET2NOg7wgJF2KqDL5yWU_7tZw',
  'phc_qgUFp5wz2BjC4RsFjMGpQ3PGDrsi6Q0CG0CP4NAac0I',
] as const;
