import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_PAGES, consoleDir } from '../../src/http/consoleRoutes.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { builtConsole } from './builtConsole.ts';

let t: TestService;
beforeAll(async () => {
  builtConsole();
  t = await startTestService({}, { clickhouse: false });
});
afterAll(() => t?.close());

const get = (p: string, headers: Record<string, string> = {}) => fetch(`${t.url}${p}`, { headers });

describe('the console at /', () => {
  it('loads index.html, never cached, on every bookmarkable page', async () => {
    for (const p of [
      '/',
      '/events',
      '/events/0190a0e4-0000-7000-8000-000000000000',
      '/persons/u1',
      '/flags/7',
      '/insights/abc',
    ]) {
      const res = await get(p, { accept: 'text/html' });
      expect(res.status, p).toBe(200);
      expect(res.headers.get('content-type'), p).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control'), p).toBe('no-cache');
      expect(await res.text(), p).toContain('<div id="app"></div>');
    }
  });

  it('serves the hashed assets compressed and immutable for a year', async () => {
    const html = await (await get('/')).text();
    const script = html.match(/src="(\/assets\/[^"]+\.js)"/)?.[1];
    expect(script).toBeDefined();
    const res = await get(script!, { 'accept-encoding': 'br, gzip' });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(res.headers.get('content-encoding')).toBe('br');
    const raw = fs.readFileSync(path.join(consoleDir(), script!));
    expect(await res.text()).toBe(raw.toString());
  });

  it('leaves the API, capture and flags answering as before', async () => {
    const unknownApi = await get('/api/nope/', { accept: 'text/html' });
    expect(unknownApi.status).toBe(404);
    expect(await unknownApi.json()).toMatchObject({ type: 'invalid_request', code: 'not_found' });
    const unknown = await get('/nope', { accept: 'text/html' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'not_found' });
    expect((await get('/assets/missing.js')).status).toBe(404);
    const flags = await get('/flags/?v=2');
    expect(flags.headers.get('content-type')).toMatch(/json/);
    const projects = await t.api('GET', '/api/projects/');
    expect(projects.status).toBe(200);
  });

  it('is not part of the OpenAPI document', async () => {
    const doc = (await t.api('GET', '/api/schema/')).body;
    for (const page of [...CONSOLE_PAGES, '/flags/{id}', '/assets/{*}'])
      expect(doc.paths[page], page).toBeUndefined();
  });
});
