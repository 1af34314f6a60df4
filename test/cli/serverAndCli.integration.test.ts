import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import {
  repositoryRoot as root,
  type ServerProcess,
  startServerProcess,
  stopServerProcess,
} from '../support/serverProcess.ts';

const run = promisify(execFile);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-e2e-'));
const baseEnv = {
  ...process.env,
  DATA_DIR: dataDir,
  LOG_LEVEL: 'warn',
  DATABASE_URL: '',
  EVENTSTORE_URL: '',
  CLICKHOUSE_URL: '',
};

/** `npm start` as a user runs it, on the embedded stores under DATA_DIR. */
const startServer = () => startServerProcess({ DATA_DIR: dataDir });

const stopServer = async (s: ServerProcess) => {
  const code = await stopServerProcess(s);
  if (code !== 0) console.error(`server exited with ${code}:\n${s.output()}`);
  return code;
};

/** Progress lines (stderr) of the last call */
let progress = '';
const cli = async (...args: string[]) => {
  const { stdout, stderr } = await run(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', ...args, '--json'],
    { cwd: root, env: baseEnv },
  );
  progress = stderr;
  return JSON.parse(stdout.trim().split('\n').pop()!);
};

const get = async (url: string, key: string) => {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: (await res.json()) as any };
};

let server: ServerProcess | undefined;
afterAll(async () => {
  if (server && server.child.exitCode === null) await stopServer(server);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('npm start and the CLI on one data dir', () => {
  it('fails fast on bad config with one clear line', async () => {
    const failed = await run(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: root,
      env: { ...baseEnv, PORT: 'eighty' },
    }).catch((e) => e);
    expect(failed.code).toBe(1);
    expect(failed.stderr.trim()).toMatch(/^invalid configuration: PORT: /);
    expect(failed.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('bootstraps with generated keys printed once, serves, works beside the CLI, and keeps everything across a restart', async () => {
    server = await startServer();
    const personalKey = /personal API key[^:]*: (phx_\S+)/.exec(server.output())?.[1];
    const projectKey = /project API key[^:]*: (phc_\S+)/.exec(server.output())?.[1];
    expect(personalKey).toBeDefined();
    expect(projectKey).toBeDefined();
    const projects = await get(`${server.url}/api/projects/`, personalKey!);
    expect(projects.status).toBe(200);
    expect(projects.body.results.map((p: { name: string }) => p.name)).toEqual(['Default project']);

    // The CLI attaches to the running server's embedded Postgres; the server sees its writes at once.
    const created = await cli('project', 'create', '--name', 'Second');
    expect(created).toMatchObject({
      project_id: expect.any(Number),
      project_api_key: expect.stringMatching(/^phc_/),
      personal_api_key: expect.stringMatching(/^phx_/),
    });
    const seen = await get(`${server.url}/api/projects/`, created.personal_api_key);
    expect(seen.body.results.map((p: { id: number }) => p.id)).toEqual([created.project_id]);

    const role = await cli(
      'role',
      'create',
      '--name',
      'Flag editors',
      '--access-level',
      '37',
      '--member',
      'ed@example.com',
    );
    expect(role.id).toMatch(/^[0-9a-f-]{36}$/);
    const readOnly = await cli(
      'personal-key',
      'create',
      '--project',
      String(created.project_id),
      '--scopes',
      'feature_flag:read',
      '--user',
      'ed@example.com',
    );
    const list = await get(
      `${server.url}/api/projects/${created.project_id}/feature_flags/`,
      readOnly.personal_api_key,
    );
    expect(list.status).toBe(200);
    const write = await fetch(`${server.url}/api/projects/${created.project_id}/feature_flags/`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${readOnly.personal_api_key}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ key: 'nope' }),
    });
    expect(write.status).toBe(403);

    const flag = await fetch(`${server.url}/api/projects/@current/feature_flags/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${personalKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'survives-restart' }),
    });
    expect(flag.status).toBe(201);

    await capture(
      { url: server.url, projectApiKey: projectKey! },
      [1, 2, 3].map((n) => ({ event: `e${n}`, properties: { distinct_id: 'cli-user' } })),
    );

    // Everything rebuilds beside the running server: the Postgres read models in shadow tables by
    // the CLI, the ClickHouse ones (embedded chDB lives in the server's process) by the server on
    // the CLI's request, into shadow tables swapped in at the end.
    const rebuilt = await cli('rebuild', 'all');
    // said at once, before the seconds of loading and opening the stores
    expect(progress.split('\n')[0]).toBe(
      'rebuilding all: opening the data directory and reading the log…',
    );
    expect(rebuilt.rebuilt.map((r: { name: string }) => r.name)).toEqual(
      expect.arrayContaining([
        'access',
        'feature_flags',
        'persons',
        'clickhouse:events',
        'clickhouse:person_distinct_id',
      ]),
    );
    expect(rebuilt.rebuilt.filter((r: { skipped?: string }) => r.skipped)).toEqual([]);
    // Not a terminal: plain progress lines on stderr, each read model ending at 100 %.
    expect(progress).toMatch(/^persons: (\d+)\/\1 positions \(100 %\), \d+ events\/s/m);
    expect(progress).toMatch(
      /^clickhouse:events \+ clickhouse:person_distinct_id: (\d+)\/\1 positions \(100 %\)/m,
    );
    // The server went on answering, from the swapped-in tables, and its live projection goes on.
    const beside = await get(
      `${server.url}/api/projects/@current/events/?distinct_id=cli-user`,
      personalKey!,
    );
    expect(beside.body.results.map((e: { event: string }) => e.event).sort()).toEqual([
      'e1',
      'e2',
      'e3',
    ]);
    await capture({ url: server.url, projectApiKey: projectKey! }, [
      { event: 'e4', properties: { distinct_id: 'cli-user' } },
    ]);
    const live = await get(
      `${server.url}/api/projects/@current/events/?distinct_id=cli-user`,
      personalKey!,
    );
    expect(live.body.results.map((e: { event: string }) => e.event).sort()).toEqual([
      'e1',
      'e2',
      'e3',
      'e4',
    ]);

    expect(await stopServer(server)).toBe(0);
    // With the server stopped the ClickHouse events table can be replayed from the log too, here
    // side by side with the persons read model.
    const events = await cli('rebuild', 'persons', 'events');
    // (the ClickHouse part with chDB reading the log itself: every event in SQL here)
    const inClickHouse = (n: number) => ({ inClickHouse: n, inNode: 0 });
    expect(events.rebuilt).toEqual([
      {
        name: 'persons',
        events: expect.any(Number),
        position: expect.stringMatching(/^\d+$/),
        parked: 0,
      },
      {
        name: 'clickhouse:events',
        position: expect.stringMatching(/^\d+$/),
        replayed: inClickHouse(4),
      },
      {
        name: 'clickhouse:person_distinct_id',
        position: expect.stringMatching(/^\d+$/),
        replayed: expect.objectContaining({ inNode: 0 }),
      },
    ]);
    expect(progress).toMatch(
      /^clickhouse:events \+ clickhouse:person_distinct_id: (\d+)\/\1 positions \(100 %\)/m,
    );
    server = await startServer();
    const listed = await get(
      `${server.url}/api/projects/@current/events/?distinct_id=cli-user`,
      personalKey!,
    );
    expect(listed.body.results.map((e: { event: string }) => e.event).sort()).toEqual([
      'e1',
      'e2',
      'e3',
      'e4',
    ]);
    expect(server.output()).not.toMatch(/personal API key/);
    const after = await get(`${server.url}/api/projects/@current/feature_flags/`, personalKey!);
    expect(after.status).toBe(200);
    expect(after.body.results.map((f: { key: string }) => f.key)).toEqual(['survives-restart']);
    expect((await get(`${server.url}/_readyz`, personalKey!)).body).toEqual({ status: 'ready' });
    expect(await stopServer(server)).toBe(0);
  }, 120_000);
});
