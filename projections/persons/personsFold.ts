import type {
  EventCaptured,
  EventCapturedData,
} from '../../commands/capture/model/eventCaptured.ts';
import type { PersonEvent } from '../../commands/persons/model/personEvents.ts';
import type { PositionedEvent, RecordedEvent } from '../../src/core/event.ts';
import { assignInto, copyOf } from '../../src/core/objects.ts';
import { uuidv5 } from '../../src/core/uuidv5.ts';
import { isPersonUpdateWorthAWrite } from './filteredPersonUpdates.ts';
import {
  applyPersonUpdate,
  isDistinctIdIllegal,
  MAX_PERSON_PROPERTIES,
  type Properties,
  personUpdateOf,
} from './personUpdates.ts';

/** What the fold reads: captured events and person management events (the projection's filter). */
export type PersonsFoldEvent = EventCaptured | PersonEvent;

export const PERSON_UUID_NAMESPACE = '932979b4-65c3-4424-8467-0b66ec27bc22';
/** PostHog's person UUID for a distinct id, so ids agree with PostHog's clients and exports. */
export const personUuidFor = (projectId: number, distinctId: string) =>
  uuidv5(`${projectId}:${distinctId}`, PERSON_UUID_NAMESPACE);

export type PersonRow = {
  id: number;
  uuid: string;
  projectId: number;
  properties: Properties;
  isIdentified: boolean;
  createdAt: string;
  version: number;
  distinctIds: string[];
};
export type GroupRow = {
  projectId: number;
  groupTypeIndex: number;
  groupKey: string;
  properties: Properties;
  createdAt: string;
  version: number;
};
/**
 * A person the fold created, and where: the event's log position and the distinct id it was created
 * for (its first). One event creates at most one person per distinct id, so (project, position,
 * distinct id) names it without the global integer id; time travel, which folds only a slice of the
 * log, maps its own persons to the live ids through it.
 */
export type PersonCreated = {
  id: number;
  projectId: number;
  uuid: string;
  distinctId: string;
  position: bigint;
};
/**
 * Two distinct ids of one project whose persons one event read together (a merge asked for by
 * `$identify`, `$create_alias` or `$merge_dangerously`, done or refused). These are the only reads
 * across distinct ids: the persons of distinct ids never linked, even through others, never
 * influence each other, which is what lets time travel fold one person's part of the log alone.
 */
export type PersonLink = { projectId: number; distinctId: string; otherId: string };
export type PersonWarning = {
  projectId: number;
  type: string;
  eventUuid: string | null;
  details: Properties;
  at: string;
};

/**
 * The part of the persons and groups read model a batch touches, loaded before the batch and
 * written back after it. Every rule below is a pure function of this set and the event, applied in
 * log order, which is what makes a rebuild reproduce the same ids, uuids and properties.
 */
export type WorkingSet = {
  persons: Map<number, PersonRow>;
  /** `${projectId}|${uuid}` → id of the live person holding that uuid (kept with `persons`) */
  personUuids: Map<string, number>;
  /** `${projectId}|${distinctId}` → person id, or null when known to have none */
  mapping: Map<string, number | null>;
  nextPersonId: number;
  /**
   * Order stamps of mappings (`ord`): every attach of a distinct id to a person takes the next
   * stamp, so a person's ids are listed in the order they were attached to it (moved ids after
   * the target's own), exactly as `PersonRow.distinctIds` holds them. Stamped in the fold, not
   * when saving, so the order does not depend on where batches were cut.
   */
  nextOrd: number;
  /**
   * What `nextPersonId` and `nextOrd` advance by: 1, or the number of ingestion partitions, each
   * drawing its own ids `i + 1, i + 1 + N, …` (docs/SCALING.md), so N = 1 is the old sequence.
   */
  idStride: number;
  mappingOrds: Map<string, number>;
  /** projectId → group type → index (0–4) */
  groupTypes: Map<number, Map<string, number>>;
  groups: Map<string, GroupRow | null>;
  dirtyPersons: Set<number>;
  deletedPersons: Set<number>;
  dirtyMappings: Set<string>;
  dirtyGroups: Set<string>;
  newGroupTypes: { projectId: number; groupType: string; index: number }[];
  warnings: PersonWarning[];
  /** persons created (also those deleted or merged away later in the same batch) */
  createdPersons: PersonCreated[];
  links: PersonLink[];
};

export const mappingKey = (projectId: number, distinctId: string) => `${projectId}|${distinctId}`;
export const groupKeyOf = (projectId: number, index: number, key: string) =>
  `${projectId}|${index}|${key}`;
export const MAX_GROUP_TYPES = 5;

const str = (v: unknown): string | undefined =>
  v === undefined || v === null ? undefined : typeof v === 'string' ? v : JSON.stringify(v);

/** Distinct ids and groups an event needs loaded. */
export function keysOf(event: RecordedEvent): {
  distinctIds: [number, string][];
  groups: [number, string, string][];
} {
  if (event.type === 'EventCaptured') {
    const d = event.data as EventCapturedData;
    const p = d.properties;
    const ids: [number, string][] = [[d.projectId, d.distinctId]];
    // both: an event may carry either, and the merge rules read the one its name calls for
    for (const other of [str(p.$anon_distinct_id), str(p.alias)])
      if (other) ids.push([d.projectId, other]);
    const groups: [number, string, string][] = [];
    if (d.event === '$groupidentify' && str(p.$group_type) && str(p.$group_key) !== undefined)
      groups.push([d.projectId, str(p.$group_type)!, str(p.$group_key)!]);
    return { distinctIds: ids, groups };
  }
  const d = (event as RecordedEvent<PersonEvent>).data;
  const extra =
    event.type === 'PersonSplit'
      ? (d as { splitDistinctIds: string[]; keepDistinctId: string }).splitDistinctIds.concat(
          (d as { keepDistinctId: string }).keepDistinctId,
        )
      : [];
  return {
    distinctIds: [
      [d.projectId, d.distinctId],
      ...extra.map((x): [number, string] => [d.projectId, x]),
    ],
    groups: [],
  };
}

const personOf = (ws: WorkingSet, projectId: number, distinctId: string): PersonRow | undefined => {
  const id = ws.mapping.get(mappingKey(projectId, distinctId));
  return id === null || id === undefined ? undefined : ws.persons.get(id);
};

function attach(ws: WorkingSet, person: PersonRow, distinctId: string): void {
  const key = mappingKey(person.projectId, distinctId);
  if (ws.mapping.get(key) === person.id && person.distinctIds.includes(distinctId)) return; // already there, keeps its place
  if (!person.distinctIds.includes(distinctId)) person.distinctIds.push(distinctId);
  ws.mapping.set(key, person.id);
  ws.mappingOrds.set(key, ws.nextOrd);
  ws.nextOrd += ws.idStride;
  ws.dirtyMappings.add(key);
  ws.dirtyPersons.add(person.id);
}

function createPerson(
  ws: WorkingSet,
  projectId: number,
  uuid: string,
  distinctIds: string[],
  properties: Properties,
  createdAt: string,
  isIdentified: boolean,
): PersonRow {
  // An index, not a scan of the working set: a bulk rebuild folds tens of thousands of persons in one set.
  const taken = ws.personUuids.has(`${projectId}|${uuid}`);
  const id = ws.nextPersonId;
  ws.nextPersonId += ws.idStride;
  const person: PersonRow = {
    id,
    uuid: taken ? uuidv5(`${uuid}:${ws.nextPersonId}`, PERSON_UUID_NAMESPACE) : uuid,
    projectId,
    properties,
    isIdentified,
    createdAt,
    version: 0,
    distinctIds: [],
  };
  holdPerson(ws, person);
  for (const d of distinctIds) attach(ws, person, d);
  return person;
}

function deletePerson(ws: WorkingSet, person: PersonRow): void {
  ws.deletedPersons.add(person.id);
  ws.dirtyPersons.delete(person.id);
  for (const d of person.distinctIds) {
    const key = mappingKey(person.projectId, d);
    if (ws.mapping.get(key) === person.id) {
      ws.mapping.set(key, null);
      ws.dirtyMappings.add(key);
    }
  }
  ws.persons.delete(person.id);
  const uuidKey = `${person.projectId}|${person.uuid}`;
  if (ws.personUuids.get(uuidKey) === person.id) ws.personUuids.delete(uuidKey);
}

/** Puts a person into the working set (loaded or created), with its uuid in the index. */
export function holdPerson(ws: WorkingSet, person: PersonRow): void {
  ws.persons.set(person.id, person);
  ws.personUuids.set(`${person.projectId}|${person.uuid}`, person.id);
}

const warn = (ws: WorkingSet, d: EventCapturedData, type: string, details: Properties): void => {
  ws.warnings.push({ projectId: d.projectId, type, eventUuid: d.uuid, details, at: d.receivedAt });
};

/** The merge an event asks for (capture.md §3.5): the distinct id to merge in, if any. */
function mergeRequestOf(d: EventCapturedData): { otherId: string; dangerous: boolean } | undefined {
  const p = d.properties;
  if (d.event === '$identify') {
    const anon = str(p.$anon_distinct_id);
    return anon ? { otherId: anon, dangerous: false } : undefined;
  }
  if (d.event === '$create_alias' || d.event === '$merge_dangerously') {
    const alias = str(p.alias);
    return alias ? { otherId: alias, dangerous: d.event === '$merge_dangerously' } : undefined;
  }
  return undefined;
}

/** capture.md §3.5: `other` is merged into the person of the event's distinct id. */
function merge(ws: WorkingSet, d: EventCapturedData, otherId: string, dangerous: boolean): void {
  const intoId = d.distinctId;
  if (otherId === intoId) return;
  if (isDistinctIdIllegal(otherId) || isDistinctIdIllegal(intoId)) {
    return warn(ws, d, 'cannot_merge_with_illegal_distinct_id', {
      illegalDistinctId: isDistinctIdIllegal(otherId) ? otherId : intoId,
      otherDistinctId: otherId,
    });
  }
  // From here on the rules read both persons: whatever the outcome, the two ids are linked.
  ws.links.push({ projectId: d.projectId, distinctId: intoId, otherId });
  const into = personOf(ws, d.projectId, intoId);
  const other = personOf(ws, d.projectId, otherId);
  const update = personUpdateOf(d);
  let target: PersonRow;
  if (!into && !other) {
    target = createPerson(
      ws,
      d.projectId,
      personUuidFor(d.projectId, intoId),
      [intoId, otherId],
      { ...update.setOnce, ...update.set, $creator_event_uuid: d.uuid },
      d.timestamp,
      true,
    );
  } else if (into && !other) {
    target = into;
    attach(ws, into, otherId);
  } else if (!into && other) {
    target = other;
    attach(ws, other, intoId);
  } else if (into!.id === other!.id) {
    target = into!;
  } else if (other!.isIdentified && !dangerous) {
    warn(ws, d, 'cannot_merge_already_identified', {
      sourcePersonDistinctId: otherId,
      targetPersonDistinctId: intoId,
    });
    target = into!;
  } else {
    target = into!;
    const source = other!;
    target.properties = assignInto(copyOf(source.properties), target.properties);
    if (source.createdAt < target.createdAt) target.createdAt = source.createdAt;
    target.version = Math.max(target.version, source.version);
    const moved = [...source.distinctIds];
    deletePerson(ws, source);
    for (const id of moved) attach(ws, target, id);
  }
  // The flag is raised before the merge is attempted, so even a refused merge identifies.
  if (!target.isIdentified) target.isIdentified = true;
  target.version++;
  ws.dirtyPersons.add(target.id);
}

function upsertGroup(ws: WorkingSet, d: EventCapturedData): void {
  const type = str(d.properties.$group_type);
  const key = str(d.properties.$group_key);
  if (!type || key === undefined) return;
  const index = groupTypeIndex(ws, d.projectId, type);
  if (index === undefined) return;
  const k = groupKeyOf(d.projectId, index, key);
  const set = (d.properties.$group_set ?? {}) as Properties;
  const current = ws.groups.get(k);
  if (!current) {
    ws.groups.set(k, {
      projectId: d.projectId,
      groupTypeIndex: index,
      groupKey: key,
      properties: { ...set },
      createdAt: d.timestamp,
      version: 0,
    });
  } else {
    const next = applyPersonUpdate(current.properties, { set, setOnce: {}, unset: [] });
    if (next === current.properties) return;
    current.properties = next;
    current.version++;
  }
  ws.dirtyGroups.add(k);
}

/** Group types get indexes 0–4 in order of first sight; a sixth type gets none. */
function groupTypeIndex(ws: WorkingSet, projectId: number, type: string): number | undefined {
  const types = ws.groupTypes.get(projectId) ?? new Map<string, number>();
  ws.groupTypes.set(projectId, types);
  const known = types.get(type);
  if (known !== undefined || types.size >= MAX_GROUP_TYPES) return known;
  const index = types.size;
  types.set(type, index);
  ws.newGroupTypes.push({ projectId, groupType: type, index });
  return index;
}

const NEVER_UPDATE_PERSONS = new Set(['$exception', '$$heatmap']);

function applyCaptured(ws: WorkingSet, d: EventCapturedData): void {
  const p = d.properties;
  if (p.$process_person_profile === false) return; // personless event
  const groups = p.$groups;
  if (typeof groups === 'object' && groups !== null && !Array.isArray(groups)) {
    for (const type of Object.keys(groups)) groupTypeIndex(ws, d.projectId, type);
  }
  if (d.event === '$groupidentify') return upsertGroup(ws, d);
  const request = mergeRequestOf(d);
  if (request) merge(ws, d, request.otherId, request.dangerous);

  const update = personUpdateOf(d);
  const person = personOf(ws, d.projectId, d.distinctId);
  if (!person) {
    createPerson(
      ws,
      d.projectId,
      personUuidFor(d.projectId, d.distinctId),
      [d.distinctId],
      NEVER_UPDATE_PERSONS.has(d.event)
        ? {}
        : { ...update.setOnce, ...update.set, $creator_event_uuid: d.uuid },
      d.timestamp,
      false,
    );
    return;
  }
  if (NEVER_UPDATE_PERSONS.has(d.event)) return;
  // Only-filtered changes (a new $current_url on a $pageview) leave the person as it was: no write.
  if (!isPersonUpdateWorthAWrite(d.event, person.properties, update)) return;
  const next = applyPersonUpdate(person.properties, update);
  const refused = [...Object.keys(update.setOnce), ...Object.keys(update.set)].filter(
    (k) => !(k in next) && !update.unset.includes(k),
  );
  if (refused.length > 0)
    warn(ws, d, 'person_properties_limit_exceeded', {
      limit: MAX_PERSON_PROPERTIES,
      refused: refused.length,
    });
  if (next !== person.properties) {
    person.properties = next;
    person.version++;
    ws.dirtyPersons.add(person.id);
  }
}

function applyPersonEvent(ws: WorkingSet, event: PersonEvent): void {
  const d = event.data;
  const person = personOf(ws, d.projectId, d.distinctId);
  if (!person) return; // deleted or merged away since the command was decided
  const touch = (properties: Properties) => {
    if (properties === person.properties) return;
    person.properties = properties;
    person.version++;
    ws.dirtyPersons.add(person.id);
  };
  switch (event.type) {
    case 'PersonPropertiesUpdated':
      return touch(
        applyPersonUpdate(person.properties, { set: event.data.set, setOnce: {}, unset: [] }),
      );
    case 'PersonPropertyDeleted':
      return touch(
        applyPersonUpdate(person.properties, { set: {}, setOnce: {}, unset: [event.data.key] }),
      );
    case 'PersonSplit': {
      for (const id of event.data.splitDistinctIds) {
        if (
          id === event.data.keepDistinctId ||
          ws.mapping.get(mappingKey(d.projectId, id)) !== person.id
        )
          continue;
        person.distinctIds = person.distinctIds.filter((x) => x !== id);
        const fresh = createPerson(
          ws,
          d.projectId,
          personUuidFor(d.projectId, id),
          [id],
          {},
          person.createdAt,
          false,
        );
        fresh.version = person.version + 1;
      }
      if (event.data.wipeProperties) person.properties = {};
      person.version++;
      ws.dirtyPersons.add(person.id);
      return;
    }
    case 'PersonDeleted':
      return deletePerson(ws, person);
  }
}

export function applyToWorkingSet(ws: WorkingSet, event: PositionedEvent): void {
  const firstNew = ws.nextPersonId;
  if (event.type === 'EventCaptured') applyCaptured(ws, event.data as EventCapturedData);
  else applyPersonEvent(ws, event as unknown as PersonEvent);
  // No rule creates a person and removes it, or one of its ids, within the same event.
  for (let id = firstNew; id < ws.nextPersonId; id += ws.idStride) {
    const p = ws.persons.get(id)!;
    ws.createdPersons.push({
      id,
      projectId: p.projectId,
      uuid: p.uuid,
      distinctId: p.distinctIds[0]!,
      position: event.position,
    });
  }
}

export const emptyWorkingSet = (nextPersonId = 1, nextOrd = 1, idStride = 1): WorkingSet => ({
  persons: new Map(),
  personUuids: new Map(),
  mapping: new Map(),
  nextPersonId,
  nextOrd,
  idStride,
  mappingOrds: new Map(),
  groupTypes: new Map(),
  groups: new Map(),
  dirtyPersons: new Set(),
  deletedPersons: new Set(),
  dirtyMappings: new Set(),
  dirtyGroups: new Set(),
  newGroupTypes: [],
  warnings: [],
  createdPersons: [],
  links: [],
});
