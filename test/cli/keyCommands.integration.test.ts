import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUser } from '../http/helpers.ts';
import { sendRaw } from '../support/captureClient.ts';
import { startTestService, type TestService } from '../support/testService.ts';

// Issue #28: a leaked personal key is revoked with one command and refused on the next request;
// a rotated project key stops capture at once. The CLI runs as an operator runs it, beside a
// running server on the same Postgres.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
let t: TestService;
let dataDir: string;
beforeAll(async () => {
  t = await startTestService({}, { clickhouse: false });
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-cli-keys-'));
});
afterAll(async () => {
  await t?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const cli = async (...args: string[]) => {
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', ...args, '--json'],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        DATABASE_URL: t.config.databaseUrl!,
        LOG_LEVEL: 'warn',
      },
      timeout: 60_000,
    },
  );
  return JSON.parse(stdout.trim().split('\n').pop()!);
};

describe('key commands of the CLI beside a running server', () => {
  it('personal-key list shows masked keys; revoke refuses the key on the next request', async () => {
    const leaked = await newUser(t, { scopes: ['project:read'] });
    expect((await t.api('GET', '/api/projects/', undefined, leaked.key)).status).toBe(200);
    const listed = await cli('personal-key', 'list', '--user', leaked.email);
    expect(listed).toEqual([
      expect.objectContaining({
        mask_value: `phx_...${leaked.key.slice(-4)}`,
        value: null,
        user_id: leaked.userId,
        user_email: leaked.email,
        scopes: ['project:read'],
      }),
    ]);
    expect(JSON.stringify(listed)).not.toContain(leaked.key);
    expect(await cli('personal-key', 'revoke', listed[0].id)).toEqual({
      id: listed[0].id,
      revoked: true,
    });
    const refused = await t.api('GET', '/api/projects/', undefined, leaked.key);
    expect(refused.status, refused.text).toBe(401);
    expect(refused.body.code).toBe('invalid_personal_api_key');
  });

  it('personal-key roll prints a new value that works while the old one is refused', async () => {
    const user = await newUser(t, { scopes: ['project:read'] });
    const [key] = await cli('personal-key', 'list', '--user', user.email);
    const rolled = await cli('personal-key', 'roll', key.id);
    expect(rolled.personal_api_key).toMatch(/^phx_/);
    expect((await t.api('GET', '/api/projects/', undefined, user.key)).status).toBe(401);
    expect((await t.api('GET', '/api/projects/', undefined, rolled.personal_api_key)).status).toBe(
      200,
    );
  });

  it('project reset-token stops capture with the old key at once (401), the new key captures', async () => {
    const capture = (key: string) =>
      sendRaw(t.url, {
        path: '/batch/',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ api_key: key, batch: [{ event: 'e', distinct_id: 'd' }] }),
      });
    // warms the server's token cache with the key about to be replaced
    expect((await capture(t.projectApiKey)).status).toBe(200);
    const reset = await cli('project', 'reset-token', String(t.projectId));
    expect(reset).toEqual({
      project_id: t.projectId,
      project_api_key: expect.stringMatching(/^phc_/),
    });
    // The server learns of it from the log (its own reset_token route is not involved): give it
    // the moment its subscription takes, not the cache's 30 s.
    const deadline = Date.now() + 3_000;
    let old = await capture(t.projectApiKey);
    while (old.status === 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      old = await capture(t.projectApiKey);
    }
    expect(old.status, old.text).toBe(401);
    expect(JSON.parse(old.text)).toMatchObject({ code: 'invalid_api_key' });
    expect((await capture(reset.project_api_key)).status).toBe(200);
  });

  it('answers an unknown key id with exit 1 and a usage error with exit 2', async () => {
    const missing = await cli(
      'personal-key',
      'revoke',
      '0190a0b0-0000-7000-8000-000000000099',
    ).catch((e) => e);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/does not exist/);
    const bad = await cli('personal-key', 'roll', 'nope').catch((e) => e);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/not a key id/);
  });
});
