import { afterEach, describe, expect, it } from 'vitest';
import type {
  PersonEventsDeleted,
  PersonEventsDeletionQueued,
} from '../../../commands/persons/model/personEvents.ts';
import { eventDeletionsProjection } from '../../../projections/eventDeletions/eventDeletionsProjection.ts';
import {
  deletedEventsKey,
  eventDeletionsReader,
} from '../../../projections/eventDeletions/eventDeletionsReader.ts';
import { type ProjectionSpec, projectionSpec, recorded } from '../../support/projectionSpec.ts';

type DeletionEvent = PersonEventsDeletionQueued | PersonEventsDeleted;

const PERSON = '0190a0b0-0000-7000-8000-000000000001';
const OTHER = '0190a0b0-0000-7000-8000-000000000002';
const Q1 = '00000000-0000-4000-8000-000000000001';
const Q2 = '00000000-0000-4000-8000-000000000002';
const AT = '2024-05-01T10:00:00.000Z';
const LATER = '2024-05-05T05:00:00.000Z';

const queued = (
  id: string,
  personUuid: string,
  distinctIds: string[],
  personId?: number,
): DeletionEvent & { id: string } => ({
  id,
  type: 'PersonEventsDeletionQueued',
  data: {
    projectId: 1,
    personUuid,
    distinctIds,
    at: AT,
    ...(personId !== undefined ? { personId } : {}),
  },
});
const deleted = (
  queuedEventId: string,
  personUuid: string,
  distinctIds: string[],
  upToPosition: bigint,
): DeletionEvent => ({
  type: 'PersonEventsDeleted',
  data: {
    projectId: 1,
    personUuid,
    distinctIds,
    queuedEventId,
    upToPosition: upToPosition.toString(),
    at: LATER,
  },
});

let spec: ProjectionSpec<DeletionEvent> | undefined;
afterEach(async () => {
  await spec?.close();
  spec = undefined;
});

describe('event_deletions projection: given log events → rows', () => {
  it('a queued deletion is a pending queue row, up to its own log position', async () => {
    spec = await projectionSpec(eventDeletionsProjection);
    await spec.given(recorded([queued(Q1, PERSON, ['anon', 'user'], 7)], 41n));
    expect(await spec.rows('event_deletion_queue')).toEqual([
      {
        id: Q1,
        project_id: 1,
        person_uuid: PERSON,
        person_id: 7,
        distinct_ids: ['anon', 'user'],
        up_to_position: '41',
        queued_at: new Date(AT),
        deleted_at: null,
        deleted_position: null,
      },
    ]);
    expect(await spec.rows('deleted_person_events')).toEqual([]);
  });

  it('its PersonEventsDeleted closes the row and records each distinct id up to the queued position', async () => {
    spec = await projectionSpec(eventDeletionsProjection);
    await spec.given(
      recorded([queued(Q1, PERSON, ['anon', 'user']), queued(Q2, OTHER, ['other'])], 10n),
    );
    await spec.given(recorded([deleted(Q1, PERSON, ['anon', 'user'], 10n)], 20n));
    expect(await spec.rows('event_deletion_queue', 'up_to_position')).toMatchObject([
      { id: Q1, person_id: null, deleted_at: new Date(LATER), deleted_position: '20' },
      { id: Q2, deleted_at: null, deleted_position: null },
    ]);
    expect(await spec.rows('deleted_person_events', 'distinct_id')).toEqual([
      { project_id: 1, distinct_id: 'anon', up_to_position: '10' },
      { project_id: 1, distinct_id: 'user', up_to_position: '10' },
    ]);
  });

  it('a replayed batch changes nothing: the first completion stays, no row twice', async () => {
    spec = await projectionSpec(eventDeletionsProjection);
    const batch = [queued(Q1, PERSON, ['anon']), deleted(Q1, PERSON, ['anon'], 1n)];
    await spec.given(recorded(batch, 1n));
    await spec.given(
      recorded(batch, 1n).map((e) =>
        e.type === 'PersonEventsDeleted' ? { ...e, position: 9n, data: { ...e.data, at: AT } } : e,
      ),
    );
    expect(await spec.rows('event_deletion_queue')).toMatchObject([
      { id: Q1, up_to_position: '1', deleted_at: new Date(LATER), deleted_position: '2' },
    ]);
    expect(await spec.rows('deleted_person_events')).toEqual([
      { project_id: 1, distinct_id: 'anon', up_to_position: '1' },
    ]);
  });

  it('the reader: pending entries ClickHouse has reached, oldest first; waiting ones; deletions reaching a position', async () => {
    spec = await projectionSpec(eventDeletionsProjection);
    await spec.given(recorded([queued(Q1, PERSON, ['anon']), queued(Q2, OTHER, ['other'])], 5n)); // positions 5, 6
    const reader = eventDeletionsReader(spec.pool);
    expect(await reader.pendingDeletions(6n, 10, [])).toEqual([
      { id: Q1, projectId: 1, personUuid: PERSON, distinctIds: ['anon'], upToPosition: 5n },
      { id: Q2, projectId: 1, personUuid: OTHER, distinctIds: ['other'], upToPosition: 6n },
    ]);
    expect((await reader.pendingDeletions(5n, 10, [])).map((d) => d.id)).toEqual([Q1]);
    expect((await reader.pendingDeletions(6n, 10, [Q1])).map((d) => d.id)).toEqual([Q2]);
    expect(await reader.pendingDeletions(6n, 1, [])).toHaveLength(1);
    expect(await reader.countWaitingDeletions(5n)).toBe(1);

    await spec.given(recorded([deleted(Q1, PERSON, ['anon'], 5n)], 7n));
    expect((await reader.pendingDeletions(6n, 10, [])).map((d) => d.id)).toEqual([Q2]);
    expect(await reader.deletedSince(5n)).toEqual(new Map([[deletedEventsKey(1, 'anon'), 5n]]));
    expect((await reader.deletedSince(6n)).size).toBe(0);
  });
});
