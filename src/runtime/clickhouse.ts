import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { type ClickHouseClient, createClient } from '@clickhouse/client';

/**
 * One client type for both runtimes: a ClickHouse server by URL, or embedded chDB plugged into the
 * same @clickhouse/client through its Connection interface, so every query is the same SQL.
 */
export function createClickHouse(url: string | undefined, dataDir: string): ClickHouseClient {
  if (url) return createClient({ url });
  const dir = path.join(dataDir, 'clickhouse');
  fs.mkdirSync(dir, { recursive: true });
  // chdb/connection is CommonJS; loading it lazily keeps servers that use a URL free of the native module.
  const { createChdbConnection } = createRequire(import.meta.url)('chdb/connection') as typeof import('chdb/connection');
  return createClient({ connection: createChdbConnection({ path: dir }) } as Parameters<typeof createClient>[0]);
}
