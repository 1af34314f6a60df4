import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { accessReader } from '../../projections/access/accessReader.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { createService, type Service } from '../../src/service.ts';
import { createTestDatabase } from './testDatabase.ts';

export type TestService = Readonly<{
  service: Service;
  url: string;
  config: Config;
  projectId: number;
  projectApiKey: string;
  personalApiKey: string;
  /** fetch against the running server, JSON in and out; Bearer key defaults to the admin key */
  api: (
    method: string,
    path: string,
    body?: unknown,
    key?: string | null,
  ) => Promise<{ status: number; body: any; text: string }>;
  close: () => Promise<void>;
}>;

/**
 * The real service on a fresh database over real HTTP: what a client sees.
 */
export async function startTestService(
  env: Record<string, string> = {},
  options: {
    databaseUrl?: string;
    dataDir?: string;
    now?: () => Date;
    /** false: no ClickHouse (no chDB, no events projection), for suites that never read it */
    clickhouse?: false;
  } = {},
): Promise<TestService> {
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-test-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    DATABASE_URL: options.databaseUrl ?? (await createTestDatabase()),
    PORT: '0',
    LOG_LEVEL: 'silent',
    // The suites send hundreds of requests a minute with one key; the limit has its own test.
    API_RATE_LIMIT_PER_MINUTE: '0',
    API_RATE_LIMIT_PER_IP_PER_MINUTE: '0',
    INIT_PROJECT_API_KEY: 'phc_test_project_key_0001',
    INIT_PERSONAL_API_KEY: 'phx_test_personal_key_0001',
    // chDB allows one directory per process: services of a test file share it, each in its own database.
    CHDB_PATH: path.join(os.tmpdir(), `hogstream-chdb-${process.pid}`),
    CLICKHOUSE_DATABASE: `t_${randomBytes(6).toString('hex')}`,
    ...env,
  });
  const service = await createService(config, {
    ...(options.now ? { now: options.now } : {}),
    ...(options.clickhouse === false ? { clickhouse: false } : {}),
  });
  const url = await service.app.listen({ port: 0, host: '127.0.0.1' });
  const projectId = await accessReader(service.stores.pool).firstProjectId();
  const api: TestService['api'] = async (
    method,
    p,
    body,
    key = config.initPersonalApiKey ?? null,
  ) => {
    const headers: Record<string, string> = {};
    if (key) headers.authorization = `Bearer ${key}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${url}${p}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, body: parsed, text };
  };
  return {
    service,
    url,
    config,
    projectId: projectId!,
    projectApiKey: config.initProjectApiKey!,
    personalApiKey: config.initPersonalApiKey!,
    api,
    close: () => service.close(),
  };
}
