import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessDeps } from '../../commands/access/accessDeps.ts';
import { createProject } from '../../commands/access/createProject.ts';
import { personEventTypes } from '../../commands/persons/model/personEvents.ts';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { adminUserId, expectError, expectValidation, newUser } from './helpers.ts';

/**
 * `POST feature_flags/user_blast_radius/`: persons (and groups) captured through /batch/, counted
 * by a release condition's properties; the rollout percentage is not applied (as in PostHog).
 */
let t: TestService;
let projectId: number;
const path = () => `/api/projects/${projectId}/feature_flags/user_blast_radius/`;

beforeAll(async () => {
  t = await startTestService();
  const token = `phc_blast_${process.pid}_${Date.now().toString(36)}`;
  ({ projectId } = await createProject(accessDeps(t.service.ctx), {
    name: 'blast radius',
    ownerUserId: await adminUserId(t),
    projectApiKey: token,
  }));
  const set = (distinctId: string, props: Record<string, unknown>) => ({
    event: '$set',
    properties: { distinct_id: distinctId, $set: props },
  });
  const group = (type: string, key: string, props: Record<string, unknown>) => ({
    event: '$groupidentify',
    properties: {
      distinct_id: `$${type}_${key}`,
      $group_type: type,
      $group_key: key,
      $group_set: props,
    },
  });
  // Six persons: f has two distinct ids (merged by $identify) and counts once.
  await capture(
    t,
    [
      set('a', { email: 'a@acme.com', plan: 'pro', age: 30 }),
      set('b', { email: 'b@acme.com', plan: 'free', age: 20 }),
      set('c', { email: 'c@other.org', plan: 'pro', age: 45 }),
      set('d', { plan: 'free' }),
      set('e', { name: 'E' }),
      set('f-anon', {}),
      group('company', 'acme', { size: 50, plan: 'enterprise' }),
    ],
    { apiKey: token },
  );
  await capture(
    t,
    [
      {
        event: '$identify',
        properties: {
          distinct_id: 'f',
          $anon_distinct_id: 'f-anon',
          $set: { email: 'f@acme.com' },
        },
      },
      group('company', 'globex', { size: 5 }),
    ],
    { apiKey: token },
  );
  await capture(t, [group('team', 'red', {})], { apiKey: token });
  const [newest] = await t.service.ctx.store.readAll({
    direction: 'backwards',
    before: 'end',
    maxCount: 1,
    filter: { eventTypes: ['EventCaptured', ...personEventTypes] },
  });
  expect(await t.service.runners.get('persons')!.waitFor(newest!.position, 20_000)).toBe(true);
});
afterAll(async () => {
  await t?.close();
});

const person = (key: string, operator: string, value?: unknown) => ({
  key,
  type: 'person',
  operator,
  ...(value === undefined ? {} : { value }),
});
const company = (key: string, operator: string, value?: unknown) => ({
  key,
  type: 'group',
  group_type_index: 0,
  operator,
  ...(value === undefined ? {} : { value }),
});
async function radius(body: unknown, key?: string | null) {
  const res = await t.api('POST', path(), body, key);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

describe('user_blast_radius: persons', () => {
  it('counts every person when the condition has no properties', async () => {
    expect(await radius({ condition: { properties: [] } })).toEqual({
      users_affected: 6,
      total_users: 6,
    });
    expect(await radius({ condition: {}, group_type_index: null })).toEqual({
      users_affected: 6,
      total_users: 6,
    });
  });

  it('counts the persons the properties match (all of them must hold), each person once', async () => {
    const cases: [unknown[], number][] = [
      [[person('email', 'icontains', 'ACME')], 3],
      [[person('plan', 'exact', 'pro'), person('age', 'gt', 25)], 2],
      [[person('plan', 'exact', ['pro', 'free'])], 4],
      [[person('plan', 'is_not', 'pro')], 4],
      [[person('email', 'is_not_set')], 2],
      [[person('email', 'regex', '^[ab]@')], 2],
      [[{ key: 'plan', value: 'free' }], 2],
      [[person('age', 'lt', 10)], 0],
    ];
    for (const [properties, affected] of cases) {
      expect(await radius({ condition: { properties } }), JSON.stringify(properties)).toEqual({
        users_affected: affected,
        total_users: 6,
      });
    }
  });

  it('does not apply the rollout percentage (PostHog leaves that to the UI)', async () => {
    const properties = [person('plan', 'exact', 'pro')];
    for (const rollout_percentage of [0, 50, 100, null])
      expect(await radius({ condition: { properties, rollout_percentage } })).toEqual({
        users_affected: 2,
        total_users: 6,
      });
  });
});

describe('user_blast_radius: groups', () => {
  it('counts the groups of group_type_index that the group properties match', async () => {
    expect(await radius({ condition: { properties: [] }, group_type_index: 0 })).toEqual({
      users_affected: 2,
      total_users: 2,
    });
    expect(
      await radius({ condition: { properties: [company('size', 'gt', 10)] }, group_type_index: 0 }),
    ).toEqual({ users_affected: 1, total_users: 2 });
    expect(
      await radius({
        condition: { properties: [{ key: '$group_key', operator: 'exact', value: 'globex' }] },
        group_type_index: 0,
      }),
    ).toEqual({ users_affected: 1, total_users: 2 });
    expect(await radius({ condition: {}, group_type_index: 1 })).toEqual({
      users_affected: 1,
      total_users: 1,
    });
    expect(await radius({ condition: {}, group_type_index: 3 })).toEqual({
      users_affected: 0,
      total_users: 0,
    });
  });
});

describe('user_blast_radius: refusals', () => {
  it('400 for cohorts, mixed targets, bad filters and bad bodies', async () => {
    const bad: unknown[] = [
      { condition: { properties: [{ key: 'id', type: 'cohort', value: 3 }] } },
      { condition: { properties: [company('size', 'gt', 1)] } },
      { condition: { properties: [company('size', 'gt', 1)] }, group_type_index: 1 },
      { condition: { properties: [person('plan', 'exact', 'pro')] }, group_type_index: 0 },
      { condition: { properties: [person('plan', 'sounds_like', 'pro')] } },
      { condition: { properties: [person('plan', 'regex', '(')] } },
      { condition: { properties: [person('plan', 'exact')] } },
      { condition: { properties: [], rollout_percentage: 101 } },
      { condition: { properties: 'plan=pro' } },
      { condition: {}, group_type_index: 'company' },
      {},
    ];
    for (const body of bad) {
      const res = await t.api('POST', path(), body);
      expect(res.status, `${JSON.stringify(body)} → ${res.text}`).toBe(400);
      expect(res.body.type).toBe('validation_error');
    }
    expectValidation(
      await t.api('POST', path(), {
        condition: { properties: [company('size', 'gt', 1)] },
        group_type_index: 1,
      }),
      'condition',
    );
    const tooMany = Array.from({ length: 101 }, () => person('plan', 'is_set'));
    expectValidation(
      await t.api('POST', path(), { condition: { properties: tooMany } }),
      'condition',
    );
  });

  it('401 without a key, 403 without feature_flag:read, 404 for another project', async () => {
    expectError(await t.api('POST', path(), { condition: {} }, null), 401);
    const noScope = await newUser(t, { projectId, scopes: ['person:read'] });
    expectError(await t.api('POST', path(), { condition: {} }, noScope.key), 403);
    const reader = await newUser(t, { projectId, scopes: ['feature_flag:read'] });
    expect(await radius({ condition: {} }, reader.key)).toEqual({
      users_affected: 6,
      total_users: 6,
    });
    const outsider = await newUser(t, { projectId: t.projectId, scopes: ['feature_flag:read'] });
    expectError(await t.api('POST', path(), { condition: {} }, outsider.key), 404);
  });
});
