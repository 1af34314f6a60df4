import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/testService.ts';
import { createFlag, expectError, flagPath } from './helpers.ts';

// Issue #12: time travel beyond persons. GET feature_flags/:id/?as_of= answers the flag as its
// stream says it was then, in the live GET's shape.
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => t?.close());

const pause = () => new Promise((r) => setTimeout(r, 30));

describe('GET feature_flags/:id/?as_of=', () => {
  it('answers the flag as it was before each PATCH, and as it is now', async () => {
    const flag = await createFlag(t, { key: 'travel', name: 'First name' });
    await pause();
    const beforeRename = new Date().toISOString();
    await pause();
    const renamed = await t.api('PATCH', flagPath(t.projectId, flag.id), {
      name: 'Second name',
      active: false,
    });
    expect(renamed.status, renamed.text).toBe(200);
    await pause();
    const beforeDelete = new Date().toISOString();
    await pause();
    const deleted = await t.api('PATCH', flagPath(t.projectId, flag.id), { deleted: true });
    expect(deleted.status, deleted.text).toBe(200);

    const then = await t.api(
      'GET',
      `${flagPath(t.projectId, flag.id)}?as_of=${encodeURIComponent(beforeRename)}`,
    );
    expect(then.status, then.text).toBe(200);
    expect(then.body).toMatchObject({
      id: flag.id,
      key: 'travel',
      name: 'First name',
      active: true,
      deleted: false,
    });
    const middle = await t.api('GET', `${flagPath(t.projectId, flag.id)}?as_of=${beforeDelete}`);
    expect(middle.body).toMatchObject({ name: 'Second name', active: false, deleted: false });

    // The activity of the same flag, narrowed to a window (exclusive bounds).
    const activity = (q: string) => t.api('GET', `${flagPath(t.projectId, flag.id)}activity/?${q}`);
    const all = await activity('');
    expect(all.body.results.map((e: any) => e.activity)).toEqual(['deleted', 'updated', 'created']);
    const early = await activity(`before=${encodeURIComponent(beforeRename)}`);
    expect(early.body.results.map((e: any) => e.activity)).toEqual(['created']);
    expect(early.body.total_count).toBe(1);
    const late = await activity(`after=${encodeURIComponent(beforeRename)}`);
    expect(late.body.results.map((e: any) => e.activity)).toEqual(['deleted', 'updated']);
    const between = await activity(
      `after=${encodeURIComponent(beforeRename)}&before=${encodeURIComponent(beforeDelete)}`,
    );
    expect(between.body.results).toHaveLength(1);
    expect(between.body.results[0].detail.changes.map((c: any) => c.field).sort()).toEqual([
      'active',
      'name',
    ]);
    expectError(await activity('after=last-week'), 400, { attr: 'after' });

    // Now, through the stream, is what the read model says.
    const live = await t.api('GET', flagPath(t.projectId, flag.id));
    const far = await t.api('GET', `${flagPath(t.projectId, flag.id)}?as_of=2999-01-01T00:00:00Z`);
    expect(far.body).toEqual(live.body);
    expect(live.body).toMatchObject({ name: 'Second name', deleted: true });
  });

  it('404 before the flag existed or for another project’s flag; 400 for a time that does not parse', async () => {
    const flag = await createFlag(t, { key: 'travel-later' });
    const early = await t.api(
      'GET',
      `${flagPath(t.projectId, flag.id)}?as_of=2000-01-01T00:00:00Z`,
    );
    expectError(early, 404);
    expectError(await t.api('GET', `${flagPath(t.projectId, flag.id)}?as_of=yesterday-ish`), 400, {
      code: 'invalid_input',
      attr: 'as_of',
    });
    expectError(
      await t.api('GET', `${flagPath(t.projectId + 1000, flag.id)}?as_of=2999-01-01`),
      404,
    );
  });
});
