/**
 * bench/decide's peer: unleash-server, installed outside the repository (bench/decide.ts installs it
 * on first use), started as unleash-peer.md says. Env: UNLEASH_DIR (the install prefix), PG_PORT,
 * ADMIN_TOKEN, CLIENT_TOKEN, FRONTEND_TOKEN. Prints "listening on http://…" when it serves.
 */
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const env = (name: string) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is required`);
  return v;
};
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

// Some settings are read when the module loads: set them before the import.
process.env.CHECK_VERSION = 'false';
process.env.SEND_TELEMETRY = 'false';
process.env.INIT_ADMIN_API_TOKENS = env('ADMIN_TOKEN');
process.env.INIT_CLIENT_API_TOKENS = env('CLIENT_TOKEN');
process.env.INIT_FRONTEND_API_TOKENS = env('FRONTEND_TOKEN');

const entry = path.join(env('UNLEASH_DIR'), 'node_modules/unleash-server/dist/lib/server-impl.js');
const unleash = (await import(pathToFileURL(entry).href)) as {
  start(options: unknown): Promise<{ stop(): Promise<void> }>;
  default?: { start(options: unknown): Promise<{ stop(): Promise<void> }> };
};
const start = unleash.start ?? unleash.default!.start;
const port = await freePort();
const instance = await start({
  db: {
    host: '127.0.0.1',
    port: Number(env('PG_PORT')),
    user: 'unleash',
    password: 'unleash',
    database: 'unleash',
    ssl: false,
  },
  server: { host: '127.0.0.1', port },
  authentication: { type: 'open-source', enableApiToken: true },
  versionCheck: { enable: false },
  logLevel: 'warn',
  rateLimiting: { sdkApiMaxPerMinute: 1e8, tokenAuthenticationMaxPerMinute: 1e8 },
});
console.log(`listening on http://127.0.0.1:${port}`);

const stop = () => void instance.stop().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
setInterval(() => {
  if (process.ppid === 1) stop();
}, 1_000).unref();
