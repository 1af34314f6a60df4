/**
 * Process `cohortCalculation`: recalculates the membership of dynamic cohorts and records it in
 * the log (`CohortCalculationStarted`, `CohortMembersChanged` with the persons added and removed,
 * `CohortCalculated` with the count or the error), which the cohorts projection folds into
 * `is_calculating`, `last_calculation`, `errors_calculating` and the member rows. Person property
 * filters are decided with the flag evaluator's cohort semantics (as /decide decides them);
 * behavioural filters ("performed an event at least N times in the last D days") in ClickHouse,
 * then handed to the evaluator as a property of each person.
 */
import type pg from 'pg';
import type { CohortCalculationEvent, PropertyGroup } from '../../commands/cohorts/model/cohort.ts';
import { cohortStream } from '../../commands/cohorts/model/cohort.ts';
import { actionsReader } from '../../projections/actions/actionsReader.ts';
import { personsWhoPerformed } from '../../projections/analytics/behaviouralReader.ts';
import { personDistinctIdReadModel } from '../../projections/analytics/personDistinctIdProjection.ts';
import { cohortsProjection } from '../../projections/cohorts/cohortsProjection.ts';
import { type CohortRow, cohortsReader } from '../../projections/cohorts/cohortsReader.ts';
import { eventsProjection } from '../../projections/events/eventsProjection.ts';
import { cohortMembership } from '../../projections/featureFlags/evaluation/evaluateFlags.ts';
import { personBatchesReader } from '../../projections/persons/personBatchesReader.ts';
import { personsProjection } from '../../projections/persons/personsProjection.ts';
import { type AppContext, awaitNewest } from '../../src/appContext.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';

export type CohortCalculationDeps = Readonly<{
  store: EventStore;
  pool: pg.Pool;
  /** behavioural filters need it; without, such a cohort's calculation records an error */
  clickhouse?: ClickHouse;
  now: () => Date;
  awaitProjection: AppContext['awaitProjection'];
}>;

const CHUNK = 10_000;
const BATCH = 1_000;
const YES = 'yes';
const HOURS = { hour: 1, day: 24, week: 24 * 7, month: 24 * 30, year: 24 * 365 } as const;

type Behavioural = {
  /** an event name, or with `event_type` "actions" an action id */
  key: string | number;
  event_type?: 'events' | 'actions';
  time_value: number;
  time_interval: keyof typeof HOURS;
  operator?: 'gte' | 'exact' | 'lte';
  operator_value?: number;
};

/** The definition with each behavioural filter i replaced by the person property `$$behavioral_i`. */
function withoutBehavioural(group: PropertyGroup, found: Behavioural[]): PropertyGroup {
  return {
    type: group.type,
    values: group.values.map((item) => {
      if ('values' in item) return withoutBehavioural(item as PropertyGroup, found);
      if (item.type !== 'behavioral') return item;
      found.push(item as unknown as Behavioural);
      return {
        key: `$$behavioral_${found.length - 1}`,
        type: 'person',
        operator: 'exact',
        value: YES,
        ...(item.negation === true ? { negation: true } : {}),
      };
    }),
  };
}

async function members(deps: CohortCalculationDeps, row: CohortRow, now: Date): Promise<string[]> {
  const behavioural: Behavioural[] = [];
  const definition = withoutBehavioural(row.filters.properties, behavioural);
  const did = await Promise.all(
    behavioural.map(async (b) => {
      if (!deps.clickhouse) throw new Error('behavioural filters need ClickHouse');
      const since = new Date(now.getTime() - b.time_value * HOURS[b.time_interval] * 3_600_000);
      // an action is read when the cohort is calculated: a changed action changes the cohort
      const action =
        b.event_type === 'actions'
          ? await actionsReader(deps.pool).get(row.project_id, Number(b.key))
          : undefined;
      if (b.event_type === 'actions' && !action)
        throw new Error(`action ${b.key} does not exist in this project`);
      return new Set(
        await personsWhoPerformed(deps.clickhouse, {
          projectId: row.project_id,
          event: String(b.key),
          ...(action ? { actionSteps: action.steps } : {}),
          now,
          since: since.toISOString(),
          operator: b.operator ?? 'gte',
          count: b.operator_value ?? 1,
        }),
      );
    }),
  );
  const id = String(row.id);
  const cohorts = {
    ...(await cohortsReader(deps.pool).definitions(row.project_id)),
    [id]: definition,
  };
  const persons = personBatchesReader(deps.pool);
  const out: string[] = [];
  for (let after = 0; ; ) {
    const batch = await persons.after(row.project_id, after, BATCH);
    if (batch.length === 0) break;
    for (const p of batch) {
      const properties = { ...p.properties };
      did.forEach((set, i) => {
        properties[`$$behavioral_${i}`] = set.has(p.uuid) ? YES : 'no';
      });
      const inCohort = cohortMembership(
        { distinctId: p.distinct_id ?? '', person: { properties, complete: true }, cohorts },
        { now: () => now },
        [id],
      );
      if (inCohort.length > 0) out.push(p.uuid);
    }
    after = batch.at(-1)!.id;
  }
  return out;
}

async function record(
  deps: CohortCalculationDeps,
  cohortId: number,
  events: CohortCalculationEvent[],
): Promise<bigint> {
  const at = deps.now().toISOString();
  const [result] = await deps.store.appendMany([
    {
      streamName: cohortStream(cohortId),
      events: events.map((e) => ({
        ...e,
        metadata: {
          projectId: e.data.projectId,
          correlationId: 'cohort-calculation',
          occurredAt: at,
        },
      })),
      expectedRevision: 'any',
    },
  ]);
  return result!.position;
}

/** Recalculates one dynamic cohort; the count, or null when it is not one (or failed). */
export async function calculateCohort(
  deps: CohortCalculationDeps,
  projectId: number,
  cohortId: number,
): Promise<number | null> {
  const cohorts = cohortsReader(deps.pool);
  const row = await cohorts.get(projectId, cohortId);
  if (!row || row.is_static) return null;
  // Everything captured before the calculation counts: the persons read model and ClickHouse's
  // events and distinct id map first apply the newest captured event (bounded wait).
  await awaitNewest(
    deps,
    { eventTypes: ['EventCaptured'] },
    personsProjection,
    ...(deps.clickhouse ? [eventsProjection, personDistinctIdReadModel] : []),
  );
  const now = deps.now();
  const base = { cohortId, projectId };
  await record(deps, cohortId, [
    { type: 'CohortCalculationStarted', data: { ...base, at: now.toISOString() } },
  ]);
  let events: CohortCalculationEvent[];
  let count: number | null = null;
  try {
    const now_ = await members(deps, row, now);
    const wanted = new Set(now_);
    const current = new Set(await cohorts.members(cohortId));
    const added = now_.filter((u) => !current.has(u));
    const removed = [...current].filter((u) => !wanted.has(u));
    events = [];
    for (let i = 0; i < Math.max(added.length, removed.length); i += CHUNK)
      events.push({
        type: 'CohortMembersChanged',
        data: { ...base, added: added.slice(i, i + CHUNK), removed: removed.slice(i, i + CHUNK) },
      });
    count = wanted.size;
    events.push({
      type: 'CohortCalculated',
      data: { ...base, at: deps.now().toISOString(), count },
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    events = [
      {
        type: 'CohortCalculated',
        data: { ...base, at: deps.now().toISOString(), count: null, error: message },
      },
    ];
  }
  await deps.awaitProjection(cohortsProjection, await record(deps, cohortId, events));
  return count;
}
