import { afterEach, describe, expect, it } from 'vitest';
import { personUuidFor } from '../../../projections/persons/personsFold.ts';
import {
  formatHistory,
  PersonHistoryFold,
  personHistory,
} from '../../../queries/personTimeTravel/personHistory.ts';
import { captured, identify, log, managed, sliceDeps, T } from '../../support/personLog.ts';

const wholeLog = (events: ReturnType<typeof log>, distinctId: string, projectId: number) => {
  const fold = new PersonHistoryFold(projectId);
  for (const e of events) fold.apply(e);
  return fold.result(distinctId);
};
const asked: [ReturnType<typeof log>, string, number][] = [];
/** The fold over the whole log (the reference); every answer is also checked on the person's slice below. */
const history = (events: ReturnType<typeof log>, distinctId: string, projectId = 1) => {
  asked.push([events, distinctId, projectId]);
  return wholeLog(events, distinctId, projectId);
};
afterEach(async () => {
  for (const [events, distinctId, projectId] of asked.splice(0))
    expect(
      await personHistory(sliceDeps(events), projectId, distinctId),
      `history of ${distinctId} from its slice of the log`,
    ).toEqual(wholeLog(events, distinctId, projectId));
});

describe('person history (every property change, in log order)', () => {
  const events = log(
    captured({ distinctId: 'anon', ts: T(1), uuid: 'a', set: { plan: 'free', color: 'red' } }),
    captured({ distinctId: 'user', ts: T(2), uuid: 'u', set: { plan: 'trial' } }),
    captured({ distinctId: 'bystander', ts: T(2), set: { plan: 'x' } }),
    captured({ distinctId: 'anon', ts: T(2), projectId: 2, set: { plan: 'other project' } }),
    captured({ distinctId: 'anon', ts: T(3), event: '$set', set: { plan: 'pro', color: 'red' } }), // color unchanged
    identify('user', 'anon', T(4)),
    captured({ distinctId: 'anon', ts: T(5), unset: ['color'] }),
    managed('PersonPropertiesUpdated', 'user', T(6), { set: { vip: true } }),
    captured({ distinctId: 'user', ts: T(7) }), // changes nothing
  );

  it('follows the person the distinct id belongs to now, through the merge, and only real changes', () => {
    const h = history(events, 'anon')!;
    expect(h.person).toEqual({
      id: 2,
      uuid: personUuidFor(1, 'user'),
      distinct_ids: ['user', 'anon'],
    });
    expect(h.changes).toEqual([
      { timestamp: T(1), event: '$pageview', distinct_id: 'anon', property: 'plan', after: 'free' },
      { timestamp: T(1), event: '$pageview', distinct_id: 'anon', property: 'color', after: 'red' },
      {
        timestamp: T(1),
        event: '$pageview',
        distinct_id: 'anon',
        property: '$creator_event_uuid',
        after: 'a',
      },
      {
        timestamp: T(2),
        event: '$pageview',
        distinct_id: 'user',
        property: 'plan',
        after: 'trial',
      },
      {
        timestamp: T(2),
        event: '$pageview',
        distinct_id: 'user',
        property: '$creator_event_uuid',
        after: 'u',
      },
      {
        timestamp: T(3),
        event: '$set',
        distinct_id: 'anon',
        property: 'plan',
        before: 'free',
        after: 'pro',
      },
      // the merge into user's person: anon's keys arrive, user's values win
      { timestamp: T(4), event: '$identify', distinct_id: 'user', property: 'color', after: 'red' },
      {
        timestamp: T(5),
        event: '$pageview',
        distinct_id: 'anon',
        property: 'color',
        before: 'red',
      },
      {
        timestamp: T(6),
        event: 'PersonPropertiesUpdated',
        distinct_id: 'user',
        property: 'vip',
        after: true,
      },
    ]);
    expect(history(events, 'user')).toEqual(h);
  });

  it('prints one line per change: time, event, where it came from, key, before → after', () => {
    const text = formatHistory(history(events, 'anon')!, 'anon').split('\n');
    expect(text[0]).toBe(`person 2 (${personUuidFor(1, 'user')}), distinct ids: user, anon`);
    expect(text).toContain(`${T(3)}  $set  plan: "free" → "pro"`);
    expect(text).toContain(`${T(4)}  $identify  [user]  color: (unset) → "red"`);
    expect(text).toContain(`${T(5)}  $pageview  color: "red" → (unset)`);
    expect(text).toHaveLength(10);
  });

  it('is null for an unknown distinct id, and per project', () => {
    expect(history(events, 'nobody')).toBeNull();
    expect(history(events, 'anon', 2)!.changes.map((c) => [c.property, c.after])).toEqual([
      ['plan', 'other project'],
      ['$creator_event_uuid', expect.any(String)],
    ]);
  });

  it('a split person keeps its own history; a wipe shows every key going away', () => {
    const split = log(
      captured({ distinctId: 'a', ts: T(1), uuid: 'c', set: { k: 1 } }),
      identify('a', 'b', T(2)),
      managed('PersonSplit', 'a', T(3), {
        keepDistinctId: 'a',
        splitDistinctIds: ['a', 'b'],
        wipeProperties: true,
      }),
    );
    expect(
      history(split, 'a')!
        .changes.slice(-2)
        .map((c) => [c.event, c.property, c.before, 'after' in c]),
    ).toEqual([
      ['PersonSplit', 'k', 1, false],
      ['PersonSplit', '$creator_event_uuid', 'c', false],
    ]);
    expect(history(split, 'b')).toEqual({
      person: expect.objectContaining({ distinct_ids: ['b'] }),
      changes: [],
    });
    expect(formatHistory(history(split, 'b')!, 'b')).toMatch(/no property changes$/);
  });
});
