import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cohortStream } from '../../commands/cohorts/model/cohort.ts';
import { capture } from '../support/capture.ts';
import { createTestDatabase } from '../support/testDatabase.ts';
import { startTestService, type TestService } from '../support/testService.ts';

// Issue #26, item 6: a process killed during a cohort calculation leaves `CohortCalculationStarted`
// without its `CohortCalculated` (the cohort `is_calculating`, with the old members). The next
// start requeues it at once instead of waiting for the due sweep (which skips it: its last
// calculation is recent).
const running: TestService[] = [];
afterAll(async () => {
  for (const t of running) await t.close();
});

async function cohortWhen(t: TestService, id: number, until: (c: any) => boolean, ms: number) {
  const end = Date.now() + ms;
  let c: any;
  while (Date.now() < end) {
    c = (await t.api('GET', `/api/projects/${t.projectId}/cohorts/${id}/`)).body;
    if (until(c)) return c;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`cohort ${id} never reached the state: ${JSON.stringify(c)}`);
}

describe('a calculation interrupted by a crash', () => {
  it('is requeued when the service starts and ends within seconds with the new members', async () => {
    const databaseUrl = await createTestDatabase();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-resume-'));
    const env = { CLICKHOUSE_DATABASE: `t_resume_${process.pid}` };
    const first = await startTestService(env, { databaseUrl, dataDir });
    running.push(first);
    const setPlan = (id: string) => ({
      event: '$set',
      properties: { distinct_id: id, $set: { plan: 'pro' } },
    });
    await capture({ url: first.url, projectApiKey: first.projectApiKey }, [setPlan('r-1')]);
    const created = await first.api('POST', `/api/projects/${first.projectId}/cohorts/`, {
      name: 'Pro',
      filters: {
        properties: { type: 'AND', values: [{ key: 'plan', type: 'person', value: 'pro' }] },
      },
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as number;
    const before = await cohortWhen(first, id, (c) => c.count === 1 && !c.is_calculating, 10_000);

    // A second person arrives, then a calculation starts and its process dies (what kill -9
    // leaves in the log: the start, no end).
    await capture({ url: first.url, projectApiKey: first.projectApiKey }, [setPlan('r-2')]);
    await first.service.stores.store.appendMany([
      {
        streamName: cohortStream(id),
        events: [
          {
            type: 'CohortCalculationStarted',
            data: { cohortId: id, projectId: first.projectId, at: new Date().toISOString() },
            metadata: {
              projectId: first.projectId,
              correlationId: 'cohort-calculation',
              occurredAt: new Date().toISOString(),
            },
          },
        ],
        expectedRevision: 'any',
      },
    ]);
    await cohortWhen(first, id, (c) => c.is_calculating, 10_000);
    await first.close();
    running.pop();

    const started = Date.now();
    const second = await startTestService(env, { databaseUrl, dataDir });
    running.push(second);
    const after = await cohortWhen(second, id, (c) => !c.is_calculating, 10_000);
    expect(after.count).toBe(2);
    expect(after.errors_calculating).toBe(0);
    expect(new Date(after.last_calculation).getTime()).toBeGreaterThan(
      new Date(before.last_calculation).getTime(),
    );
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 60_000);
});
