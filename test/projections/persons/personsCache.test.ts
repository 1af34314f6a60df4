import { describe, expect, it } from 'vitest';
import { createPersonsCache } from '../../../projections/persons/personsCache.ts';
import {
  emptyWorkingSet,
  holdPerson,
  mappingKey,
  type PersonRow,
} from '../../../projections/persons/personsFold.ts';

const person = (id: number, ids: string[], plan: string): PersonRow => ({
  id,
  uuid: `00000000-0000-4000-8000-00000000000${id}`,
  projectId: 1,
  properties: { plan },
  isIdentified: false,
  createdAt: '2026-11-27T00:00:00.000Z',
  version: 1,
  distinctIds: ids,
});

/** A working set as a batch leaves it: these persons, their ids, and ids known to have none. */
const saved = (persons: PersonRow[], none: string[] = [], deleted: number[] = []) => {
  const ws = emptyWorkingSet();
  for (const p of persons) {
    holdPerson(ws, p);
    for (const d of p.distinctIds) ws.mapping.set(mappingKey(1, d), p.id);
  }
  for (const d of none) ws.mapping.set(mappingKey(1, d), null);
  for (const id of deleted) ws.deletedPersons.add(id);
  return ws;
};

describe('the persons cache', () => {
  it('serves what a committed save wrote, as a copy the batch may change', () => {
    const cache = createPersonsCache();
    cache.sync('16384:1');
    expect(cache.lookup(mappingKey(1, 'a'))).toBeUndefined();
    cache.stage('2', saved([person(1, ['a', 'b'], 'pro')], ['nobody']));
    // the save committed: the next batch finds its generation
    cache.sync('16384:2');
    const found = cache.lookup(mappingKey(1, 'b'));
    expect(found).toEqual(person(1, ['a', 'b'], 'pro'));
    expect(cache.lookup(mappingKey(1, 'nobody'))).toBeNull();
    found!.distinctIds.push('c');
    expect(cache.lookup(mappingKey(1, 'a'))!.distinctIds).toEqual(['a', 'b']);
  });

  it('forgets a save that rolled back, and keeps what the tables still hold', () => {
    const cache = createPersonsCache();
    cache.sync('16384:1');
    cache.stage('2', saved([person(1, ['a'], 'free')]));
    cache.sync('16384:2');
    cache.stage('3', saved([person(1, ['a'], 'pro')]));
    // the transaction of generation 3 rolled back: the tables still hold generation 2
    cache.sync('16384:2');
    expect(cache.lookup(mappingKey(1, 'a'))!.properties).toEqual({ plan: 'free' });
  });

  it('starts empty when another writer saved, or a rebuild swapped other tables in', () => {
    const cache = createPersonsCache();
    cache.sync('16384:1');
    cache.stage('2', saved([person(1, ['a'], 'free')]));
    cache.sync('16384:2');
    cache.stage('3', saved([person(1, ['a'], 'pro')]));
    cache.sync('16384:99'); // someone else's save (parked replay) came after ours
    expect(cache.lookup(mappingKey(1, 'a'))).toBeUndefined();
    cache.stage('4', saved([person(1, ['a'], 'pro')]));
    cache.sync('20000:4'); // the same generation, but a rebuilt `persons` table
    expect(cache.lookup(mappingKey(1, 'a'))).toBeUndefined();
  });

  it('drops deleted persons and keeps at most its bound, least recently used first', () => {
    const cache = createPersonsCache(2);
    cache.sync('1:1');
    cache.stage('2', saved([person(1, ['a'], 'x'), person(2, ['b'], 'y')]));
    cache.sync('1:2');
    cache.stage('3', saved([], [], [1]));
    cache.sync('1:3');
    expect(cache.lookup(mappingKey(1, 'a'))).toBeUndefined();
    cache.stage('4', saved([person(3, ['c'], 'z'), person(4, ['d'], 'w')]));
    cache.sync('1:4');
    expect(cache.lookup(mappingKey(1, 'b'))).toBeUndefined(); // the oldest, dropped for the bound
    expect(cache.lookup(mappingKey(1, 'd'))!.id).toBe(4);
  });
});
