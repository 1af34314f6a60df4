import { defineConfig } from 'vitest/config';

// Two projects: `unit` needs no database and runs in seconds (`npm run test:unit`); `integration`
// talks to one embedded Postgres for the run (every test file gets databases of its own) and chDB.
// A test file that opens a database, a service or a process is named `*.integration.test.ts`.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: more workers only make the embedded servers fight for them.
    maxWorkers: 2,
    // A worker runs file after file without re-importing the service graph: importing it (vite's
    // transform, then evaluation) was 4 s per file, 360 s of a 960 s run. Safe because the code keeps
    // no state across services that a test can see: per-service registries and pools, caches keyed
    // by database, one shared chDB session (each service its own database); no test mocks modules or
    // changes process.env. A test that spies on a global restores it in its afterAll.
    isolate: false,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/**/*.integration.test.ts', 'test/**/*.reliability.test.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.integration.test.ts'],
          globalSetup: ['test/support/globalSetup.ts'],
        },
      },
      {
        extends: true,
        test: {
          // Fuzzing and fault injection against a running service (npm run test:reliability).
          name: 'reliability',
          include: ['test/**/*.reliability.test.ts'],
          globalSetup: ['test/support/globalSetup.ts'],
        },
      },
    ],
  },
});
