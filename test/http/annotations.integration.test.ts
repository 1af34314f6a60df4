import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInsight } from '../../commands/insights/insightHandlers.ts';
import { BOOTSTRAP_EMAIL } from '../../src/bootstrap.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { expectError, newProject, newUser } from './helpers.ts';

/** Annotations (issue #28) as PostHog's API answers them, event sourced with activity. */
let t: TestService;
beforeAll(async () => {
  t = await startTestService({}, { clickhouse: false });
});
afterAll(async () => t?.close());

const base = (projectId: number) => `/api/projects/${projectId}/annotations/`;
type Listed = { id: number; content: string };
const contents = (body: { results: Listed[] }) => body.results.map((a) => a.content);

describe('annotations CRUD', () => {
  it('creates, reads, patches, soft-deletes and restores an annotation', async () => {
    const p = await newProject(t);
    const created = await t.api('POST', base(p), {
      content: 'Launched v2',
      date_marker: '2026-03-01T12:00:00+02:00',
      scope: 'project',
      id: 999, // read-only fields sent back are ignored, as DRF does
      created_by: null,
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as number;
    expect(id).not.toBe(999);
    expect(created.body).toMatchObject({
      content: 'Launched v2',
      date_marker: '2026-03-01T10:00:00.000Z',
      creation_type: 'USR',
      dashboard_item: null,
      dashboard_id: null,
      dashboard_name: null,
      insight_short_id: null,
      scope: 'project',
      deleted: false,
      is_emoji: false,
      recording_id: null,
      created_by: { email: BOOTSTRAP_EMAIL },
    });
    expect(Date.parse(created.body.updated_at)).toBeGreaterThan(0);
    expect((await t.api('GET', `${base(p)}${id}/`)).body).toEqual(created.body);

    const patched = await t.api('PATCH', `${base(p)}${id}/`, { content: 'Launched v2.1' });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ id, content: 'Launched v2.1', scope: 'project' });

    // PostHog forbids DELETE; the UI soft-deletes with PATCH and undoes with deleted: false.
    expect((await t.api('DELETE', `${base(p)}${id}/`)).status).toBe(405);
    const deleted = await t.api('PATCH', `${base(p)}${id}/`, { deleted: true });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toMatchObject({ id, deleted: true });
    expectError(await t.api('GET', `${base(p)}${id}/`), 404, { code: 'not_found' });
    expect((await t.api('GET', base(p))).body.count).toBe(0);
    const restored = await t.api('PATCH', `${base(p)}${id}/`, { deleted: false });
    expect(restored.body).toMatchObject({ id, deleted: false, content: 'Launched v2.1' });
    expect(contents((await t.api('GET', base(p))).body)).toEqual(['Launched v2.1']);

    // Another project's annotation does not exist here.
    const other = await newProject(t);
    expectError(await t.api('GET', `${base(other)}${id}/`), 404);
    expectError(await t.api('PATCH', `${base(other)}${id}/`, { content: 'x' }), 404);
  });

  it('refuses bad input with the field at fault, never a 5xx', async () => {
    const p = await newProject(t);
    expectError(await t.api('POST', base(p), { content: 'x'.repeat(401) }), 400, {
      attr: 'content',
    });
    expectError(await t.api('POST', base(p), { content: 'x', scope: 'recording' }), 400, {
      attr: 'scope',
    });
    expectError(await t.api('POST', base(p), { content: 'x', scope: 'team' }), 400, {
      attr: 'scope',
    });
    expectError(await t.api('POST', base(p), { content: 'x', date_marker: 'yesterday' }), 400, {
      attr: 'date_marker',
    });
    expectError(await t.api('POST', base(p), { content: 'x', dashboard_item: 424242 }), 400, {
      attr: 'dashboard_item',
    });
    expectError(await t.api('POST', base(p), { content: 'x', dashboard_id: 424242 }), 400, {
      attr: 'dashboard_id',
    });
    expectError(await t.api('POST', base(p), { content: 'two', is_emoji: true }), 400, {
      attr: 'content',
    });
    expectError(await t.api('GET', `${base(p)}nope/`), 404, { code: 'not_found' });
    expectError(await t.api('GET', `${base(p)}99999999999/`), 404);
    expectError(await t.api('GET', `${base(p)}?limit=10001`), 400, { attr: 'limit' });
    expectError(await t.api('GET', `${base(p)}?scope=everywhere`), 400, { attr: 'scope' });
    expectError(await t.api('GET', `${base(p)}?date_from=soon`), 400, { attr: 'date_from' });
    expectError(await t.api('GET', `${base(p)}?date_from=2026-02-01&date_to=2026-01-01`), 400, {
      attr: 'date_from',
    });
  });

  it('asks for annotation:read to list and annotation:write to change', async () => {
    const p = await newProject(t);
    const { id } = (await t.api('POST', base(p), { content: 'n', scope: 'project' })).body;
    const reader = await newUser(t, { projectId: p, scopes: ['annotation:read'] });
    expect((await t.api('GET', base(p), undefined, reader.key)).status).toBe(200);
    expect((await t.api('GET', `${base(p)}${id}/`, undefined, reader.key)).status).toBe(200);
    expectError(await t.api('POST', base(p), { content: 'n' }, reader.key), 403);
    expectError(await t.api('PATCH', `${base(p)}${id}/`, { deleted: true }, reader.key), 403);
    const stranger = await newUser(t, { projectId: p, scopes: ['feature_flag:write'] });
    expectError(await t.api('GET', base(p), undefined, stranger.key), 403);
    const writer = await newUser(t, { projectId: p, scopes: ['annotation:write'] });
    const made = await t.api('POST', base(p), { content: 'w' }, writer.key);
    expect(made.status, made.text).toBe(201);
    expect(made.body.created_by.email).toBe(writer.email);
  });
});

describe('the annotations list', () => {
  it("filters and pages as PostHog's list does (newest marker first)", async () => {
    const p = await newProject(t);
    const { insightId: insight } = await createInsight(
      t.service.ctx,
      {
        projectId: p,
        userId: null,
        fields: {
          name: 'Signups',
          description: '',
          filters: { insight: 'TRENDS', events: [{ id: 'signed_up' }] },
          query: null,
          saved: true,
          favorited: false,
        },
        dashboards: [],
      },
      { projectId: p, occurredAt: new Date().toISOString() },
    );
    const seed = [
      { content: 'Launch v2 of billing', date_marker: '2026-01-10T00:00:00Z', scope: 'project' },
      { content: 'Outage', date_marker: '2026-01-20T00:00:00Z', scope: 'organization' },
      {
        content: 'launch V2, mobile',
        date_marker: '2026-01-30T00:00:00Z',
        dashboard_item: insight,
      },
      { content: '🎉', date_marker: '2026-02-05T00:00:00Z', scope: 'project', is_emoji: true },
      { content: 'No marker', scope: 'project' },
      { content: '100%_done', date_marker: '2026-01-01T00:00:00Z', scope: 'project' },
    ];
    for (const body of seed) expect((await t.api('POST', base(p), body)).status).toBe(201);
    const list = async (query: string) => {
      const res = await t.api('GET', `${base(p)}?${query}`);
      expect(res.status, res.text).toBe(200);
      return res.body;
    };

    // Postgres sorts a missing marker first when descending, as PostHog's -date_marker does.
    const all = await list('');
    expect(contents(all)).toEqual([
      'No marker',
      '🎉',
      'launch V2, mobile',
      'Outage',
      'Launch v2 of billing',
      '100%_done',
    ]);
    expect(all).toMatchObject({ count: 6, next: null, previous: null });

    expect(contents(await list('search=LAUNCH%20v2'))).toEqual([
      'launch V2, mobile',
      'Launch v2 of billing',
    ]);
    expect(contents(await list('search=mobile,launch'))).toEqual(['launch V2, mobile']);
    expect(contents(await list('search=%25_'))).toEqual(['100%_done']);
    const onInsight = await list('scope=insight');
    expect(contents(onInsight)).toEqual(['launch V2, mobile']);
    expect(onInsight.results[0]).toMatchObject({
      dashboard_item: insight,
      insight_short_id: expect.stringMatching(/^[A-Za-z0-9]{8}$/),
      insight_name: 'Signups',
      insight_derived_name: null,
    });
    expect(contents(await list('scope=dashboard_item'))).toEqual(['launch V2, mobile']);
    expect(contents(await list('scope=organization'))).toEqual(['Outage']);
    expect(contents(await list('date_from=2026-01-20T00:00:00Z&date_to=2026-01-30'))).toEqual([
      'launch V2, mobile',
      'Outage',
    ]);
    expect(contents(await list('date_to=2026-01-10T00:00:00'))).toEqual([
      'Launch v2 of billing',
      '100%_done',
    ]);
    expect(contents(await list('is_emoji=true'))).toEqual(['🎉']);
    expect((await list('is_emoji=false')).count).toBe(5);

    // Paging: a client that follows `next` reads every annotation once.
    const seen: string[] = [];
    let url: string | null = `${base(p)}?limit=4&scope=project`;
    while (url) {
      const page = await t.api('GET', url.replace(t.url, ''));
      seen.push(...contents(page.body));
      url = page.body.next;
    }
    expect(seen).toEqual(['No marker', '🎉', 'Launch v2 of billing', '100%_done']);
  });
});

describe('annotation activity', () => {
  it('lists who created, changed, deleted and restored what, newest first', async () => {
    const p = await newProject(t);
    const editor = await newUser(t, {
      projectId: p,
      scopes: ['annotation:write', 'activity_log:read'],
      firstName: 'Ann',
    });
    const { id } = (
      await t.api(
        'POST',
        base(p),
        { content: 'Deploy', date_marker: '2026-01-01T00:00:00Z', scope: 'project' },
        editor.key,
      )
    ).body;
    await t.api('PATCH', `${base(p)}${id}/`, { content: 'Deploy 42', date_marker: null });
    await t.api('PATCH', `${base(p)}${id}/`, { deleted: true }, editor.key);
    await t.api('PATCH', `${base(p)}${id}/`, { deleted: false }, editor.key);

    const one = await t.api('GET', `${base(p)}${id}/activity/`, undefined, editor.key);
    expect(one.status, one.text).toBe(200);
    expect(one.body.results.map((e: { activity: string }) => e.activity)).toEqual([
      'restored',
      'deleted',
      'updated',
      'created',
    ]);
    const [restored, , updated, created] = one.body.results;
    expect(restored.user.first_name).toBe('Ann');
    expect(updated.user.email).toBe(BOOTSTRAP_EMAIL);
    expect(updated.detail).toEqual({
      id: String(id),
      name: 'Deploy 42',
      changes: [
        {
          type: 'Annotation',
          action: 'changed',
          field: 'content',
          before: 'Deploy',
          after: 'Deploy 42',
        },
        {
          type: 'Annotation',
          action: 'changed',
          field: 'date_marker',
          before: '2026-01-01T00:00:00.000Z',
          after: null,
        },
      ],
    });
    expect(created).toMatchObject({ scope: 'Annotation', item_id: String(id) });

    const all = await t.api('GET', `${base(p)}activity/?limit=2`);
    expect(all.body).toMatchObject({ count: 4, total_count: 4 });
    expect(all.body.results).toHaveLength(2);
    expectError(await t.api('GET', `${base(await newProject(t))}${id}/activity/`), 404);
  });
});
