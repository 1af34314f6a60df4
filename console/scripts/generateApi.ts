import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { createService } from '../../src/service.ts';
import { API_TYPES_FILE, apiTypesOf } from './apiTypes.ts';

/**
 * `npm run console:api [--url http://host:port]`: regenerates console/src/api/schema.d.ts from the OpenAPI document.
 * Without --url it builds the server in-process on a scratch embedded Postgres and chDB (as the tests do), so the
 * document is the one this checkout serves, whatever a running server holds.
 */
async function documentOf(url: string | undefined): Promise<object> {
  if (url) return (await fetch(new URL('/api/schema/', url))).json() as Promise<object>;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-console-api-'));
  const service = await createService(
    loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent' }),
  );
  try {
    await service.app.ready();
    return service.app.swagger() as object;
  } finally {
    await service.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const args = process.argv.slice(2);
if (args.includes('--help')) {
  console.log(
    'npm run console:api [-- --url http://127.0.0.1:8000]: regenerate the console API types',
  );
  process.exit(0);
}
const urlAt = args.indexOf('--url');
const types = await apiTypesOf(await documentOf(urlAt >= 0 ? args[urlAt + 1] : undefined));
fs.writeFileSync(API_TYPES_FILE, types);
console.log(
  `wrote ${path.relative(process.cwd(), new URL(API_TYPES_FILE).pathname)} (${types.length} chars)`,
);
