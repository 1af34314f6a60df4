import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

describe('config', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 8000,
      host: '127.0.0.1',
      dataDir: path.resolve('./.data'),
      databaseUrl: undefined,
      clickhouseUrl: undefined,
      eventstoreUrl: undefined,
    });
  });
  it('has the documented connection policy and /api limits, and refuses a header timeout past the request timeout', () => {
    const c = loadConfig({});
    expect(c.connections).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 60_000,
      keepAliveTimeoutMs: 10_000,
      maxConnections: 10_000,
    });
    expect(c.apiRateLimitPerIpPerMinute).toBe(2_400);
    expect(() =>
      loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '20000', HTTP_REQUEST_TIMEOUT_MS: '10000' }),
    ).toThrow(/HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS/);
  });
  it('reads every variable, treating empty ones as unset', () => {
    const c = loadConfig({
      PORT: '9001',
      HOST: '0.0.0.0',
      DATA_DIR: '/tmp/x',
      DATABASE_URL: 'postgres://u:p@h:5432/d',
      CLICKHOUSE_URL: 'http://ch:8123',
      EVENTSTORE_URL: 'esdb://es:2113?tls=false',
      INIT_PROJECT_API_KEY: 'phc_12345678',
      INIT_PERSONAL_API_KEY: 'phx_12345678',
      LOG_LEVEL: '',
    });
    expect(c).toMatchObject({
      port: 9001,
      host: '0.0.0.0',
      dataDir: '/tmp/x',
      databaseUrl: 'postgres://u:p@h:5432/d',
      clickhouseUrl: 'http://ch:8123',
      eventstoreUrl: 'esdb://es:2113?tls=false',
      initProjectApiKey: 'phc_12345678',
      initPersonalApiKey: 'phx_12345678',
      logLevel: 'info',
    });
  });
  it.each([
    [{ PORT: 'eighty' }, /^invalid configuration: PORT: /],
    [{ PORT: '70000' }, /^invalid configuration: PORT: /],
    [
      { DATABASE_URL: 'mysql://x' },
      /^invalid configuration: DATABASE_URL: must start with postgres:\/\//,
    ],
    [
      { EVENTSTORE_URL: 'http://es:2113' },
      /^invalid configuration: EVENTSTORE_URL: must start with esdb:\/\//,
    ],
    [{ CLICKHOUSE_URL: 'ch:8123' }, /^invalid configuration: CLICKHOUSE_URL: /],
    [{ INIT_PERSONAL_API_KEY: 'short' }, /^invalid configuration: INIT_PERSONAL_API_KEY: /],
  ])('rejects %o with one clear line', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
