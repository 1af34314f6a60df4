import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../../src/runtime/embeddedPostgres.ts';
import { EmbeddedPostgresUnavailable } from '../../src/runtime/embeddedPostgresPreflight.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresAdminUrl: string;
  }
}

let stop: (() => Promise<void>) | undefined;
let dir: string | undefined;

export async function setup(project: TestProject) {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-test-pg-'));
  const pg = await startEmbeddedPostgres(dir, 'postgres').catch((error: unknown) => {
    if (!(error instanceof EmbeddedPostgresUnavailable)) throw error;
    // One line with the cause and the fix, not vitest's "Unhandled Error" and a stack.
    fs.rmSync(dir!, { recursive: true, force: true });
    console.error(`integration tests cannot start: ${error.message}`);
    process.exit(1);
  });
  stop = pg.stop;
  project.provide('postgresAdminUrl', pg.connectionString);
}

export async function teardown() {
  await stop?.();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}
