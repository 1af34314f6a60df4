import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOTSTRAP_EMAIL } from '../../src/bootstrap.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { expectError, newProject, newUser } from './helpers.ts';

/** Actions (issue #28) as PostHog's API answers them, event sourced with activity. */
let t: TestService;
beforeAll(async () => {
  t = await startTestService({}, { clickhouse: false });
});
afterAll(async () => t?.close());

const base = (projectId: number) => `/api/projects/${projectId}/actions/`;
const pricing = { event: '$pageview', url: '/pricing', url_matching: 'contains' };
const fullStep = {
  event: '$pageview',
  properties: null,
  selector: null,
  tag_name: null,
  text: null,
  text_matching: null,
  href: null,
  href_matching: null,
  url: '/pricing',
  url_matching: 'contains',
};

describe('actions CRUD', () => {
  it('creates, lists, reads, patches, soft-deletes and restores an action', async () => {
    const p = await newProject(t);
    const created = await t.api('POST', base(p), {
      name: 'Saw pricing',
      steps: [pricing],
      tags: ['growth'],
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as number;
    expect(created.body).toMatchObject({
      name: 'Saw pricing',
      description: '',
      tags: ['growth'],
      post_to_slack: false,
      slack_message_format: '',
      steps: [fullStep],
      deleted: false,
      is_calculating: false,
      team_id: p,
      is_action: true,
      bytecode_error: null,
      pinned_at: null,
      creation_context: null,
      created_by: { email: BOOTSTRAP_EMAIL },
    });
    expect((await t.api('GET', `${base(p)}${id}/`)).body).toEqual(created.body);
    await t.api('POST', base(p), { name: 'A signup', steps: [{ event: 'signed_up' }] });
    const list = await t.api('GET', base(p));
    expect(list.body).toMatchObject({ count: 2, next: null });
    expect(list.body.results.map((a: { name: string }) => a.name)).toEqual([
      'A signup',
      'Saw pricing',
    ]);

    const steps = [fullStep, { ...fullStep, url: '^https://x\\.com/$', url_matching: 'regex' }];
    const patched = await t.api('PATCH', `${base(p)}${id}/`, { steps, pinned_at: 'now' });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.steps).toEqual(steps);
    expect(Date.parse(patched.body.pinned_at)).toBeGreaterThan(Date.parse('2026-01-01'));

    expect((await t.api('DELETE', `${base(p)}${id}/`)).status).toBe(405);
    const deleted = await t.api('PATCH', `${base(p)}${id}/`, { deleted: true });
    expect(deleted.body).toMatchObject({ id, deleted: true });
    expect((await t.api('GET', base(p))).body.count).toBe(1);
    // PostHog still retrieves a deleted action (only the list hides it).
    expect((await t.api('GET', `${base(p)}${id}/`)).body.deleted).toBe(true);
    // Its name is free again, and taken again by the new one.
    const again = await t.api('POST', base(p), { name: 'Saw pricing' });
    expect(again.status, again.text).toBe(201);
    expect((await t.api('PATCH', `${base(p)}${id}/`, { deleted: false })).body.deleted).toBe(false);

    expectError(await t.api('GET', `${base(await newProject(t))}${id}/`), 404);
  });

  it('refuses bad input with the field at fault, never a 5xx', async () => {
    const p = await newProject(t);
    const { id } = (await t.api('POST', base(p), { name: 'Taken' })).body;
    const taken = await t.api('POST', base(p), { name: 'Taken' });
    expectError(taken, 400, { code: 'unique', attr: 'name' });
    expect(taken.body.detail).toBe(`This project already has an action with this name, ID ${id}`);
    const other = (await t.api('POST', base(p), { name: 'Other' })).body.id;
    expectError(await t.api('PATCH', `${base(p)}${other}/`, { name: 'Taken' }), 400, {
      code: 'unique',
    });
    expectError(await t.api('POST', base(p), { name: '   ' }), 400, { attr: 'name' });
    expectError(await t.api('POST', base(p), { steps: [] }), 400, { attr: 'name' });
    expectError(
      await t.api('POST', base(p), { name: 'r', steps: [{ url: '(', url_matching: 'regex' }] }),
      400,
    );
    expectError(
      await t.api('POST', base(p), { name: 'm', steps: [{ url: 'x', url_matching: 'fuzzy' }] }),
      400,
    );
    expectError(await t.api('GET', `${base(p)}nope/`), 404);
    expectError(await t.api('GET', `${base(p)}?limit=10001`), 400, { attr: 'limit' });
  });

  it('asks for action:read to list and action:write to change', async () => {
    const p = await newProject(t);
    const { id } = (await t.api('POST', base(p), { name: 'n' })).body;
    const reader = await newUser(t, { projectId: p, scopes: ['action:read'] });
    expect((await t.api('GET', base(p), undefined, reader.key)).status).toBe(200);
    expect((await t.api('GET', `${base(p)}${id}/`, undefined, reader.key)).status).toBe(200);
    expectError(await t.api('POST', base(p), { name: 'w' }, reader.key), 403);
    expectError(await t.api('PATCH', `${base(p)}${id}/`, { deleted: true }, reader.key), 403);
    const stranger = await newUser(t, { projectId: p, scopes: ['annotation:write'] });
    expectError(await t.api('GET', base(p), undefined, stranger.key), 403);
  });

  it('lists who changed what, newest first', async () => {
    const p = await newProject(t);
    const { id } = (await t.api('POST', base(p), { name: 'Signed up', steps: [pricing] })).body;
    await t.api('PATCH', `${base(p)}${id}/`, { name: 'Signed up!', description: 'why' });
    await t.api('PATCH', `${base(p)}${id}/`, { deleted: true });
    const res = await t.api('GET', `${base(p)}${id}/activity/`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.results.map((e: { activity: string }) => e.activity)).toEqual([
      'deleted',
      'updated',
      'created',
    ]);
    expect(res.body.results[1].detail.changes).toEqual([
      {
        type: 'Action',
        action: 'changed',
        field: 'name',
        before: 'Signed up',
        after: 'Signed up!',
      },
      { type: 'Action', action: 'changed', field: 'description', before: '', after: 'why' },
    ]);
    expect(res.body.results[1].user.email).toBe(BOOTSTRAP_EMAIL);
    expect((await t.api('GET', `${base(p)}activity/`)).body.count).toBe(3);
  });
});
