import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PersonEvent } from '../../../commands/persons/model/personEvents.ts';
import {
  applyToWorkingSet,
  emptyWorkingSet,
  mappingKey,
  type PersonRow,
  type WorkingSet,
} from '../../../projections/persons/personsFold.ts';
import { forgetBookkeeping } from '../../../queries/personTimeTravel/logReplay.ts';
import {
  cutoffMs,
  PersonAsOfFold,
  type PersonRef,
  personAsOf,
  personAsOfEvents,
} from '../../../queries/personTimeTravel/personAsOf.ts';
import {
  PersonHistoryFold,
  personHistory,
} from '../../../queries/personTimeTravel/personHistory.ts';
import {
  propertiesTimeline,
  TimelineFold,
} from '../../../queries/personTimeTravel/propertiesTimeline.ts';
import { parseTimelineQuery } from '../../../queries/personTimeTravel/timelineParams.ts';
import { DomainFailure } from '../../../src/core/errors.ts';
import type { RecordedEvent } from '../../../src/core/event.ts';
import { captured, identify, log, managed, sliceDeps, T } from '../../support/personLog.ts';

/**
 * Time travel folds only the person's part of the log (personSlice.ts). The fold over the whole log
 * stays the reference: on random logs, the slice must give exactly the same answers, for every
 * person, every distinct id and several cut-offs, whatever the persons read model has applied.
 */

const IDS = ['a', 'b', 'c', 'd', 'anonymous'] as const;
const KEYS = ['k0', 'k1', 'k2'] as const;

type Op =
  | { kind: 'capture'; id: number; day: number; event: string; props: Record<string, unknown> }
  | { kind: 'merge'; id: number; other: number; day: number; event: string; set: boolean }
  | { kind: 'command'; id: number; day: number; command: PersonEvent['type']; key: number };

const propsArb = fc.record(
  {
    $set: fc.dictionary(fc.constantFrom(...KEYS), fc.constantFrom(1, 2, 'x', null)),
    $set_once: fc.dictionary(fc.constantFrom(...KEYS), fc.constantFrom(1, 'y')),
    $unset: fc.subarray([...KEYS]),
    $process_person_profile: fc.constant(false),
  },
  { requiredKeys: [] },
);
const day = fc.integer({ min: 1, max: 9 });
const id = fc.integer({ min: 0, max: IDS.length - 1 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('capture' as const),
      id,
      day,
      event: fc.constantFrom('$pageview', '$set', '$exception', '$groupidentify'),
      props: propsArb,
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('merge' as const),
      id,
      other: id,
      day,
      event: fc.constantFrom('$identify', '$create_alias', '$merge_dangerously'),
      set: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('command' as const),
      id,
      day,
      command: fc.constantFrom(
        'PersonPropertiesUpdated',
        'PersonPropertyDeleted',
        'PersonSplit',
        'PersonDeleted',
      ),
      key: fc.integer({ min: 0, max: KEYS.length - 1 }),
    }),
  },
);
const logArb = fc.record({
  ops: fc.array(fc.record({ op: opArb, project: fc.constantFrom(1, 1, 1, 2) }), {
    minLength: 1,
    maxLength: 40,
  }),
  // how far the persons read model has applied the log: the answers' prefix
  lag: fc.integer({ min: 0, max: 3 }),
});

const personOf = (ws: WorkingSet, projectId: number, distinctId: string): PersonRow | undefined => {
  const pid = ws.mapping.get(mappingKey(projectId, distinctId));
  return pid === null || pid === undefined ? undefined : ws.persons.get(pid);
};

/**
 * The log the ops describe. Commands are decided as the API decides them: against the person the
 * distinct id has then (skipped when it has none), appended to that person's uuid stream.
 */
function build(ops: readonly { op: Op; project: number }[]): RecordedEvent[] {
  const live = emptyWorkingSet();
  const events: RecordedEvent[] = [];
  const append = (draft: Parameters<typeof log>[0]) => {
    const [e] = log(draft);
    const recorded = { ...e!, id: `e${events.length + 1}`, position: BigInt(events.length + 1) };
    applyToWorkingSet(live, recorded);
    forgetBookkeeping(live);
    events.push(recorded);
  };
  for (const [n, { op, project }] of ops.entries()) {
    const distinctId = IDS[op.id]!;
    const ts = T(op.day, n % 24);
    if (op.kind === 'capture') {
      const { $set, $set_once, $unset, ...rest } = op.props as Record<string, never>;
      append(
        captured({
          distinctId,
          ts,
          event: op.event,
          projectId: project,
          uuid: `u${n}`,
          properties: {
            ...rest,
            ...(op.event === '$groupidentify' ? { $group_type: 'org', $group_key: 'g' } : {}),
          },
          ...($set ? { set: $set } : {}),
          ...($set_once ? { setOnce: $set_once } : {}),
          ...($unset ? { unset: $unset } : {}),
        }),
      );
    } else if (op.kind === 'merge') {
      const other = IDS[op.other]!;
      const extra = { projectId: project, uuid: `u${n}`, ...(op.set ? { set: { k0: n } } : {}) };
      append(
        op.event === '$identify'
          ? identify(distinctId, other, ts, extra)
          : captured({ ...extra, distinctId, ts, event: op.event, properties: { alias: other } }),
      );
    } else {
      const person = personOf(live, project, distinctId);
      if (!person) continue;
      const key = KEYS[op.key]!;
      const extra =
        op.command === 'PersonPropertiesUpdated'
          ? { set: { [key]: `cmd${n}` } }
          : op.command === 'PersonPropertyDeleted'
            ? { key }
            : op.command === 'PersonSplit'
              ? {
                  keepDistinctId: distinctId,
                  splitDistinctIds: [...person.distinctIds],
                  wipeProperties: op.key === 0,
                }
              : { distinctIds: [...person.distinctIds], deleteEvents: false };
      append(managed(op.command, distinctId, ts, extra as never, project, person.uuid));
    }
  }
  return events;
}

const CUTOFFS = ['2023-12-31T00:00:00.000Z', T(2, 5), T(3, 12), T(5), T(6, 23), T(9, 23)];

// The timeline's window is the same for every ref: parsed once.
const TIMELINE = parseTimelineQuery(
  { date_from: '2024-01-01', date_to: '2024-01-31' },
  Date.parse(T(20)),
);

describe('a person from its slice of the log equals the whole-log fold', () => {
  it('as of every cut-off, by id, uuid and distinct id; history and timeline too (random logs)', async () => {
    // A fixed seed: the same 200 logs on every run. The whole-log reference folds run once per
    // log (per cut-off, per project) and answer every ref; each ref's slice is replayed on its own,
    // as the API does. The answers are compared in one go, keyed by what was asked. 200 runs, not
    // 400 (5 s alone, a 30 s timeout on a busy machine): a slice that follows links one hop only,
    // or reads one position past the read model, fails within the first 13 logs.
    await fc.assert(
      fc.asyncProperty(logArb, async ({ ops, lag }) => {
        const events = build(ops);
        const upTo = BigInt(Math.max(0, events.length - lag));
        const applied = events.filter((e) => e.position <= upTo);
        const deps = sliceDeps(events, { upTo });
        const whole = emptyWorkingSet();
        const created: { id: number; uuid: string; projectId: number }[] = [];
        for (const e of applied) {
          applyToWorkingSet(whole, e);
          created.push(...whole.createdPersons);
          forgetBookkeeping(whole);
        }
        const asOf = CUTOFFS.map((at) => {
          const fold = new PersonAsOfFold(cutoffMs(at));
          for (const e of applied) fold.apply(e);
          return fold;
        });
        const fromSlice: Record<string, unknown> = {};
        const fromWholeLog: Record<string, unknown> = {};
        for (const projectId of [1, 2]) {
          const timeline = new TimelineFold(projectId, TIMELINE);
          const history = new PersonHistoryFold(projectId);
          for (const e of applied) {
            timeline.apply(e);
            history.apply(e);
          }
          const refs: PersonRef[] = [
            ...IDS.map((d): PersonRef => ({ kind: 'distinct_id', distinctId: d })),
            ...created.map((c): PersonRef => ({ kind: 'id', id: c.id })),
            ...created.map((c): PersonRef => ({ kind: 'uuid', uuid: c.uuid })),
          ];
          for (const ref of refs) {
            const asked = `project ${projectId}, ${JSON.stringify(ref)}`;
            for (const [n, at] of CUTOFFS.entries()) {
              fromSlice[`${asked} as of ${at}`] = await personAsOf(deps, projectId, ref, at);
              fromWholeLog[`${asked} as of ${at}`] = asOf[n]!.find(projectId, ref);
            }
            fromSlice[`${asked} timeline`] = await propertiesTimeline(
              deps,
              projectId,
              ref,
              TIMELINE,
            );
            fromWholeLog[`${asked} timeline`] = timeline.result(ref)?.timeline ?? null;
          }
          for (const d of IDS) {
            fromSlice[`project ${projectId}, history of ${d}`] = await personHistory(
              deps,
              projectId,
              d,
            );
            fromWholeLog[`project ${projectId}, history of ${d}`] = history.result(d);
          }
        }
        expect(fromSlice).toEqual(fromWholeLog);
      }),
      { seed: 20260108, numRuns: 200 },
    );
  });
});

describe('links the slice follows', () => {
  it('a merge the live fold refused (already identified) can be done as of an earlier time: refused merges link too', async () => {
    const events = log(
      captured({ distinctId: 'a', ts: T(2), uuid: 'ua', set: { from: 'a' } }),
      captured({ distinctId: 'b', ts: T(1), uuid: 'ub', set: { from: 'b', only_b: 1 } }),
      identify('b', 'c', T(5)), // identifies b's person, stamped late
      identify('a', 'b', T(3)), // live: refused (b's person is identified); as of day 3-4: b merges into a
    );
    const live = personAsOfEvents(events, 1, { kind: 'distinct_id', distinctId: 'a' }, T(9));
    expect(live).toMatchObject({ distinct_ids: ['a'], is_identified: true });
    const then = personAsOfEvents(events, 1, { kind: 'distinct_id', distinctId: 'a' }, T(4));
    expect(then).toMatchObject({
      id: 1,
      distinct_ids: ['a', 'b'],
      created_at: T(1),
      properties: { from: 'a', only_b: 1, $creator_event_uuid: 'ua' },
    });
    expect(
      await personAsOf(sliceDeps(events), 1, { kind: 'distinct_id', distinctId: 'a' }, T(4)),
    ).toEqual(then);
  });
});

describe('what a slice reads', () => {
  const events = log(
    captured({ distinctId: 'anon', ts: T(1), set: { a: 1 } }),
    captured({ distinctId: 'stranger', ts: T(1), set: { s: 1 } }),
    captured({ distinctId: 'user', ts: T(2) }),
    identify('user', 'anon', T(3)),
    captured({ distinctId: 'stranger', ts: T(3), projectId: 2 }),
    captured({ distinctId: 'anon', ts: T(4), set: { a: 2 } }),
    managed('PersonPropertiesUpdated', 'user', T(5), { set: { vip: true } }),
    captured({ distinctId: 'stranger', ts: T(6), set: { s: 2 } }),
  );

  it("only the streams of the person's linked distinct ids and of the persons created for them", async () => {
    const deps = sliceDeps(events);
    // anon was merged into user's person: ask for anon's old person by its id, 1
    const person = await personAsOf(deps, 1, { kind: 'id', id: 1 }, T(2));
    expect(person).toMatchObject({ id: 1, distinct_ids: ['anon'], properties: { a: 1 } });
    expect(new Set(deps.reads)).toEqual(
      new Set([
        'capture-1:anon',
        'capture-1:user',
        `person-1:${person!.uuid}`,
        `person-1:${(await personAsOf(deps, 1, { kind: 'id', id: 3 }, T(9)))!.uuid}`,
      ]),
    );
    expect(deps.stats[0]).toEqual({ distinctIds: 2, streams: 4, reads: 4, events: 5 });
  });

  it("another project's person, or nobody: null, and not one stream read", async () => {
    const deps = sliceDeps(events);
    expect(await personAsOf(deps, 2, { kind: 'id', id: 1 }, T(9))).toBeNull();
    expect(await personAsOf(deps, 1, { kind: 'id', id: 99 }, T(9))).toBeNull();
    expect(
      await personAsOf(
        deps,
        2,
        { kind: 'uuid', uuid: '0190d7b3-5f1e-7c6a-9c8b-1a2b3c4d5e6f' },
        T(9),
      ),
    ).toBeNull();
    expect(await personHistory(deps, 1, 'never-seen')).toBeNull();
    expect(deps.reads).toEqual([]);
  });

  it('a log that lost events under the read model (erased by hand) answers 409 rebuild_required, not a wrong id', async () => {
    // stranger's first event gone: its next one creates a person the read model never had
    const erased = events.filter((e) => e.position !== 2n);
    const stranger = { kind: 'distinct_id', distinctId: 'stranger' } as const;
    const outcome = await personAsOf(sliceDeps(events, { log: erased }), 1, stranger, T(9)).then(
      () => 'answered',
      (e) => (e instanceof DomainFailure ? `${e.error.kind} ${e.error.code}` : String(e)),
    );
    expect(outcome).toBe('conflict rebuild_required');
  });

  it('refuses a person past the limits (400 person_history_too_large) instead of folding on', async () => {
    const refusal = async (limits: { maxDistinctIds: number; maxEvents: number }) => {
      try {
        await personAsOf(sliceDeps(events, { limits }), 1, { kind: 'id', id: 3 }, T(9));
        return 'answered';
      } catch (e) {
        return e instanceof DomainFailure ? `${e.error.kind} ${e.error.code}` : String(e);
      }
    };
    expect(await refusal({ maxDistinctIds: 2, maxEvents: 5 })).toBe('answered');
    expect(await refusal({ maxDistinctIds: 1, maxEvents: 100 })).toBe(
      'validation person_history_too_large',
    );
    expect(await refusal({ maxDistinctIds: 100, maxEvents: 4 })).toBe(
      'validation person_history_too_large',
    );
  });
});
