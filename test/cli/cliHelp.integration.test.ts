import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { pgProjections } from '../../projections/registry.ts';
import { REBUILD_TARGETS } from '../../src/cli/usage.ts';
import { createTestDatabase } from '../support/testDatabase.ts';

// Issue #12: `--help`, `help` and unknown commands or options are answered without opening a
// database (the data directory stays empty); usage errors exit 2 with the usage, help exits 0.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function cli(...args: string[]) {
  return cliWith({}, ...args);
}

function cliWith(env: Record<string, string>, ...args: string[]) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-cli-help-'));
  try {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: dataDir, ...env },
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { code: r.status, out: `${r.stdout}${r.stderr}`, touched: fs.readdirSync(dataDir) };
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('npm start --help', () => {
  it('points to the README section that holds the settings, by its name there', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', '--help'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const section = /More in README\.md \("([^"]+)"\)/.exec(r.stdout)?.[1];
    expect(section).toBe('Configuration');
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    expect(readme).toMatch(new RegExp(`^## ${section}$`, 'm'));
  });
});

describe('CLI help and usage errors', () => {
  it.each([['--help'], ['help'], ['-h']])('%s prints the usage and every command', (...args) => {
    const started = performance.now();
    const r = cli(...args);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/^Usage: npm run cli -- <command> \[options\] \[--json\]/m);
    for (const c of ['project', 'personal-key', 'role', 'rebuild', 'status', 'log', 'person'])
      expect(r.out).toMatch(new RegExp(`^  ${c}\\b`, 'm'));
    expect(r.touched).toEqual([]);
    // Help loads no command (≈ 0.6 s here, 0.9 s through npm); opening the stores took 2–7 s.
    // Loose, so a busy machine does not fail it, but loading the commands up front would.
    expect(performance.now() - started).toBeLessThan(4_000);
  });

  it.each([
    [['rebuild', '--help'], /^Usage: npm run cli -- rebuild \[options\] <read-model\.\.\.>/m],
    [['help', 'rebuild'], /^Usage: npm run cli -- rebuild \[options\] <read-model\.\.\.>/m],
    [['log', 'export', '--help'], /--to <file>[\s\S]*--from <position>[\s\S]*--until <position>/],
    [
      ['project', 'create', '-h'],
      /^Usage: npm run cli -- project create \[options\][\s\S]*--name <name>/m,
    ],
    [['personal-key', 'create', '--help'], /--scopes <scopes>/],
    [['personal-key', '--help'], /create[\s\S]*list[\s\S]*roll[\s\S]*revoke/],
    [
      ['personal-key', 'revoke', '--help'],
      /^Usage: npm run cli -- personal-key revoke \[options\] <key-id>/m,
    ],
    [
      ['project', 'reset-token', '--help'],
      /^Usage: npm run cli -- project reset-token \[options\] <project-id>/m,
    ],
    [['log', '--help'], /export[\s\S]*import/],
  ])('%j prints that command’s own help', (args, help) => {
    const r = cli(...args);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(help);
    expect(r.touched).toEqual([]);
  });

  it('names in rebuild’s help every read model it knows', () => {
    expect([...REBUILD_TARGETS].sort()).toEqual(pgProjections.map((p) => p.name).sort());
    const help = cli('rebuild', '--help').out;
    for (const target of [...REBUILD_TARGETS, 'events', 'all'])
      expect(help).toContain(`"${target}"`);
  });

  it.each([
    [['nope'], /unknown command 'nope'/],
    [['project', 'delete'], /unknown command 'delete'/],
    [['project'], /"project" needs a command: create/],
    [['project', 'create', '--name', 'x', '--bogus'], /unknown option '--bogus'/],
    [['project', 'create'], /required option '--name <name>' not specified/],
    [['rebuild', 'nope'], /value 'nope' is invalid for argument 'read-model'/],
    [['rebuild', 'persons', 'nope'], /value 'nope' is invalid for argument 'read-model'/],
    [[], /no command given/],
    [
      ['project', 'create', '--name', 'x', '--owner', 'not-an-email'],
      /--owner <email>.*must be an e-mail address/,
    ],
  ])('%j is a usage error: exit 2 with the usage, no database opened', (args, message) => {
    const r = cli(...args);
    expect(r.code, r.out).toBe(2);
    expect(r.out).toMatch(message);
    expect(r.out).toMatch(/Usage: npm run cli --/);
    expect(r.touched).toEqual([]);
  });
});

describe('CLI domain checks', () => {
  it('refuses made-up scopes (exit 2 with the usage) and names a missing project (exit 1, no usage)', async () => {
    // The shared test Postgres, not an embedded one per call: these are checks of the commands,
    // and starting a Postgres in a fresh data directory took most of this test's 12 s.
    const db = { DATABASE_URL: await createTestDatabase() };
    const scopes = cliWith(
      db,
      'personal-key',
      'create',
      '--project',
      '1',
      '--scopes',
      'feature_flag:read,rocket:launch',
    );
    expect(scopes.code, scopes.out).toBe(2);
    expect(scopes.out).toMatch(/invalid scope "rocket:launch"/);
    const missing = cliWith(
      db,
      'personal-key',
      'create',
      '--project',
      '99',
      '--scopes',
      'feature_flag:read',
    );
    expect(missing.code, missing.out).toBe(1);
    expect(missing.out).toMatch(/project 99 does not exist/);
    expect(missing.out).not.toMatch(/usage:/i);
  }, 120_000);
});
