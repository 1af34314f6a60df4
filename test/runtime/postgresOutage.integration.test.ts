import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/testService.ts';

/**
 * The embedded Postgres dies under a running server: requests answer 503 with Retry-After at once
 * (never a 500 or a hang), the server restarts its Postgres, and service resumes without a restart
 * of hogstream; nothing acknowledged is lost.
 */
let t: TestService;
beforeAll(async () => {
  // DATABASE_URL empty: the embedded Postgres under the service's own DATA_DIR, which it owns and watches.
  t = await startTestService({ DATABASE_URL: '' });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

const capture = async (uuid: string) => {
  const started = Date.now();
  const res = await fetch(`${t.url}/e/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      api_key: t.projectApiKey,
      event: 'outage',
      distinct_id: 'survivor',
      uuid,
      properties: {},
    }),
    signal: AbortSignal.timeout(10_000),
  });
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body: await res.text(),
    ms: Date.now() - started,
  };
};

describe('Postgres killed under a running server', () => {
  it('answers 503 with Retry-After within 2 s, restarts Postgres, resumes, and loses nothing acknowledged', async () => {
    const acknowledged: string[] = [];
    const first = randomUUID();
    expect((await capture(first)).status).toBe(200);
    acknowledged.push(first);

    const pidFile = path.join(t.config.dataDir, 'postgres', 'postmaster.pid');
    const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
    process.kill(pid, 'SIGKILL');

    const answers: Awaited<ReturnType<typeof capture>>[] = [];
    let health: number | undefined;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const uuid = randomUUID();
      const answer = await capture(uuid);
      answers.push(answer);
      if (answer.status === 503 && health === undefined)
        health = (await fetch(`${t.url}/_health`)).status;
      if (answer.status === 200) {
        acknowledged.push(uuid);
        if (answers.some((a) => a.status === 503)) break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }

    // Every answer during the outage was a bounded 503, never a 5xx of another kind or a hang.
    expect(answers.every((a) => a.status === 200 || a.status === 503)).toBe(true);
    expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(2_000);
    const outage = answers.filter((a) => a.status === 503);
    expect(outage.length).toBeGreaterThan(0);
    expect(outage[0]!.retryAfter).toMatch(/^\d+$/);
    expect(JSON.parse(outage[0]!.body)).toMatchObject({
      type: 'server_error',
      code: 'service_unavailable',
    });
    expect(health).toBe(503);
    // Service resumed: the last capture was acknowledged, the API answers, /_health is OK again.
    expect(answers.at(-1)!.status).toBe(200);
    expect(
      (await t.api('GET', `/api/projects/${t.projectId}/persons/?distinct_id=survivor`)).status,
    ).toBe(200);
    await new Promise((r) => setTimeout(r, 1_100)); // the health answer is cached for a second
    expect((await fetch(`${t.url}/_health`)).status).toBe(200);

    const logged = new Set<string>();
    for (const e of await t.service.stores.store.readAll({
      filter: { eventTypes: ['EventCaptured'] },
      maxCount: 10_000,
    })) {
      logged.add((e.data as { uuid: string }).uuid);
    }
    for (const uuid of acknowledged) expect(logged.has(uuid)).toBe(true);
    // The read models waited the outage out: every acknowledged event is in persons and
    // ClickHouse, and none was parked (an outage is the stores' fault, never the events').
    let pending: unknown[] = [];
    for (let i = 0; i < 300; i++) {
      const status = await t.api('GET', '/api/projections/');
      pending = status.body.read_models.filter(
        (m: { pending_events: string }) => m.pending_events !== '0',
      );
      if (status.status === 200 && pending.length === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(pending).toEqual([]);
    expect((await t.service.stores.pool.query('SELECT * FROM parked_events')).rows).toEqual([]);
  }, 90_000);
});
