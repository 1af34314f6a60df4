import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type ServerProcess,
  startServerProcess,
  stopServerProcess,
} from '../support/serverProcess.ts';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-orphan-'));
const env = {
  DATA_DIR: dataDir,
  INIT_PROJECT_API_KEY: 'phc_orphan_project_key_01',
  INIT_PERSONAL_API_KEY: 'phx_orphan_personal_key_01',
};
const servers: ServerProcess[] = [];

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const postmasterPid = () =>
  Number(fs.readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);

afterAll(async () => {
  for (const s of servers) await stopServerProcess(s, 'SIGKILL');
  const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid');
  if (fs.existsSync(pidFile) && isAlive(postmasterPid())) process.kill(postmasterPid(), 'SIGINT');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const capture = (url: string, event: string) =>
  fetch(`${url}/e/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: env.INIT_PROJECT_API_KEY, event, distinct_id: 'orphan-test' }),
  });

describe('kill -9 of the server leaves its embedded Postgres behind', () => {
  it('the next start stops the orphan, starts its own Postgres, and keeps what was acknowledged', async () => {
    const first = await startServerProcess(env);
    servers.push(first);
    expect((await capture(first.url, 'before-kill')).status).toBe(200);
    const orphan = postmasterPid();
    await stopServerProcess(first, 'SIGKILL');
    expect(isAlive(orphan)).toBe(true); // the orphan the issue describes

    const second = await startServerProcess(env);
    servers.push(second);
    expect(isAlive(orphan)).toBe(false);
    expect(postmasterPid()).not.toBe(orphan);
    expect(second.output()).toMatch(/left running by a process that is gone/);
    expect((await capture(second.url, 'after-restart')).status).toBe(200);
    // The event acknowledged before the kill made its person: it is in the log and the read model.
    const persons = await fetch(
      `${second.url}/api/projects/@current/persons/?distinct_id=orphan-test`,
      {
        headers: { authorization: `Bearer ${env.INIT_PERSONAL_API_KEY}` },
      },
    );
    expect(((await persons.json()) as { results: unknown[] }).results).toHaveLength(1);

    // A clean stop of the owner stops its Postgres too: nothing is left running.
    const owned = postmasterPid();
    expect(await stopServerProcess(second)).toBe(0);
    expect(isAlive(owned)).toBe(false);
  }, 180_000);
});
