import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture as captureBatch } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => t?.close());

const capture = async (batch: unknown[]) => {
  await captureBatch(t, batch);
};

describe('events and their persons', () => {
  it('shows each event with its person, and person_id (integer or uuid) finds the events of all its distinct ids', async () => {
    await capture([
      { event: 'viewed', properties: { distinct_id: 'anon-7' }, timestamp: '2024-05-01T10:00:00Z' },
      {
        event: '$identify',
        properties: {
          distinct_id: 'dana@example.com',
          $anon_distinct_id: 'anon-7',
          $set: { email: 'dana@example.com', plan: 'pro' },
        },
        timestamp: '2024-05-01T10:01:00Z',
      },
      {
        event: 'bought',
        properties: { distinct_id: 'dana@example.com' },
        timestamp: '2024-05-01T10:02:00Z',
      },
      {
        event: 'viewed',
        properties: { distinct_id: 'someone-else' },
        timestamp: '2024-05-01T10:03:00Z',
      },
    ]);
    const list = await t.api('GET', `/api/projects/${t.projectId}/events/?distinct_id=anon-7`);
    expect(list.status, list.text).toBe(200);
    expect(list.body.results[0].person).toEqual({
      is_identified: true,
      distinct_ids: ['anon-7'],
      properties: { email: 'dana@example.com' },
    });

    const persons = await t.api(
      'GET',
      `/api/projects/${t.projectId}/persons/?distinct_id=dana@example.com`,
    );
    const person = persons.body.results[0];
    for (const id of [String(person.id), person.uuid]) {
      const byPerson = await t.api('GET', `/api/projects/${t.projectId}/events/?person_id=${id}`);
      expect(byPerson.body.results.map((e: { event: string }) => e.event)).toEqual([
        'bought',
        '$identify',
        'viewed',
      ]);
    }
    expect(
      (
        await t.api(
          'GET',
          `/api/projects/${t.projectId}/events/?person_id=00000000-0000-0000-0000-000000000000`,
        )
      ).body.results,
    ).toEqual([]);
  });
});

describe('events and their groups', () => {
  it('events with $groups carry $group_<index> in the order group types were first seen; a sixth type gets none', async () => {
    const types = ['company', 'team', 'project', 'org', 'region', 'sixth'];
    await capture([
      ...types.map((type, i) => ({
        event: '$groupidentify',
        properties: {
          distinct_id: 'g-user',
          $group_type: type,
          $group_key: `${type}-key`,
          $group_set: { n: i },
        },
      })),
      {
        event: 'grouped',
        properties: {
          distinct_id: 'g-user',
          $groups: Object.fromEntries(types.map((t) => [t, `${t}-1`])),
        },
      },
      {
        event: 'grouped-personless',
        properties: {
          distinct_id: 'g-anon',
          $process_person_profile: false,
          $groups: { company: 'c-2' },
        },
      },
    ]);
    const grouped = await t.api('GET', `/api/projects/${t.projectId}/events/?event=grouped`);
    expect(grouped.status, grouped.text).toBe(200);
    const props = grouped.body.results[0].properties;
    expect([0, 1, 2, 3, 4].map((i) => props[`$group_${i}`])).toEqual([
      'company-1',
      'team-1',
      'project-1',
      'org-1',
      'region-1',
    ]);
    expect(props.$group_5).toBeUndefined();
    const personless = await t.api(
      'GET',
      `/api/projects/${t.projectId}/events/?event=grouped-personless`,
    );
    expect(personless.body.results[0].properties.$group_0).toBeUndefined();
    const where = await t.api(
      'GET',
      `/api/projects/${t.projectId}/events/?where=${encodeURIComponent(JSON.stringify(["properties.$group_1 = 'team-1'"]))}`,
    );
    expect(where.body.results.map((e: { event: string }) => e.event)).toEqual(['grouped']);
    const typesList = await t.api('GET', `/api/projects/${t.projectId}/groups_types/`);
    expect(typesList.body.map((g: { group_type: string }) => g.group_type)).toEqual(
      types.slice(0, 5),
    );
  });
});
