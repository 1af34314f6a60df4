import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/testService.ts';

/** Each input that once answered 500 (issue #8, item 6) now answers 4xx in the API's error shape. */
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
}, 120_000);
afterAll(async () => {
  await t?.close();
});

const raw = async (method: string, path: string, body?: string) => {
  const res = await fetch(`${t.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${t.personalApiKey}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body } : {}),
  });
  return { status: res.status, text: await res.text() };
};

const deep = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;

describe('hostile input answers 4xx, never 5xx', () => {
  const cases: [string, () => { method: string; path: string; body?: string }][] = [
    [
      'NUL in a persons query parameter',
      () => ({ method: 'GET', path: `/api/projects/${t.projectId}/persons/?search=%00` }),
    ],
    [
      'NUL in persons properties filter',
      () => ({
        method: 'GET',
        path: `/api/projects/${t.projectId}/persons/?properties=${encodeURIComponent('[{"key":"email","value":"a\\u0000b","type":"person"}]')}`,
      }),
    ],
    [
      'NUL in a person PATCH body',
      () => ({
        method: 'PATCH',
        path: `/api/projects/${t.projectId}/persons/1/`,
        body: '{"properties":{"a":"\\u0000"}}',
      }),
    ],
    [
      'lone surrogate in a flag body',
      () => ({
        method: 'POST',
        path: `/api/projects/${t.projectId}/feature_flags/`,
        body: '{"key":"lone-\\ud800","name":"\\udc00"}',
      }),
    ],
    [
      'lone surrogate in a person PATCH',
      () => ({
        method: 'PATCH',
        path: `/api/projects/${t.projectId}/persons/1/`,
        body: '{"properties":{"\\ud800":"x"}}',
      }),
    ],
    [
      '5,000-deep flag filters',
      () => ({
        method: 'POST',
        path: `/api/projects/${t.projectId}/feature_flags/`,
        body: `{"key":"deep","filters":${deep(5000)}}`,
      }),
    ],
    [
      '5,000-deep person properties',
      () => ({
        method: 'PATCH',
        path: `/api/projects/${t.projectId}/persons/1/`,
        body: `{"properties":${deep(5000)}}`,
      }),
    ],
    [
      // a JSON list, as the parameter takes it (a bare string is refused before HogQL is parsed)
      '600 NOTs in a HogQL where',
      () => ({
        method: 'GET',
        path: `/api/projects/${t.projectId}/events/?where=${encodeURIComponent(JSON.stringify([`${'NOT '.repeat(600)}1 = 1`]))}`,
      }),
    ],
    [
      'substring with the smallest Int64',
      () => ({
        method: 'GET',
        path: `/api/projects/${t.projectId}/events/?select=${encodeURIComponent(JSON.stringify(['substring(event, -9223372036854775808, 9223372036854775807)']))}`,
      }),
    ],
  ];
  for (const [name, make] of cases) {
    it(name, async () => {
      const { method, path, body } = make();
      const r = await raw(method, path, body);
      expect(
        r.status,
        `${method} ${path} → ${r.status} ${r.text.slice(0, 200)}`,
      ).toBeGreaterThanOrEqual(200);
      expect(r.status, `${method} ${path} → ${r.status} ${r.text.slice(0, 200)}`).toBeLessThan(500);
      if (r.status >= 400)
        expect(Object.keys(JSON.parse(r.text)).sort()).toEqual(['attr', 'code', 'detail', 'type']);
    });
  }
});
