import { describe, expect, it } from 'vitest';
import { EVENT_TO_PERSON_PROPERTIES } from '../../../commands/capture/model/personPropertiesFromEvent.ts';
import { GEOIP_FIELDS } from '../../../ingress/geoip.ts';
import { FILTERED_PERSON_UPDATE_PROPERTIES } from '../../../projections/persons/filteredPersonUpdates.ts';
import {
  applyToWorkingSet,
  emptyWorkingSet,
  mappingKey,
  type PersonRow,
  type WorkingSet,
} from '../../../projections/persons/personsFold.ts';
import { personAsOf, personAsOfEvents } from '../../../queries/personTimeTravel/personAsOf.ts';
import { type Captured, captured, log, sliceDeps, T } from '../../support/personLog.ts';

/**
 * PostHog's filtered person updates through the persons fold (the rule the projection, a rebuild
 * and time travel share): an ordinary event whose only changes are to keys that change often
 * leaves its person exactly as it was, unless something else in it is worth the write.
 */

const FIRST = {
  plan: 'free',
  $current_url: 'https://shop.example/a',
  $pathname: '/a',
  $browser: 'Chrome',
  $geoip_postal_code: 'EC1',
  $geoip_country_name: 'United Kingdom',
  $geoip_city_name: 'London',
  $geoip_country_code: 'GB',
};

/** A person made by a first `$pageview` setting FIRST, then `next` applied to it. */
function afterFirst(next: Omit<Captured, 'distinctId' | 'ts'>): {
  before: PersonRow;
  beforeProperties: Record<string, unknown>;
  after: PersonRow;
  ws: WorkingSet;
} {
  const ws = emptyWorkingSet();
  const [first, second] = log(
    captured({ distinctId: 'u', ts: T(1), uuid: 'ev-1', set: FIRST }),
    captured({ distinctId: 'u', ts: T(2), ...next }),
  );
  applyToWorkingSet(ws, first!);
  const id = ws.mapping.get(mappingKey(1, 'u'))!;
  const before = ws.persons.get(id)!;
  const beforeProperties = before.properties;
  ws.dirtyPersons.clear();
  applyToWorkingSet(ws, second!);
  return { before, beforeProperties, after: ws.persons.get(id)!, ws };
}

const expectUntouched = (r: ReturnType<typeof afterFirst>) => {
  expect(r.after.properties).toBe(r.beforeProperties);
  expect(r.after.properties).toEqual({ ...FIRST, $creator_event_uuid: 'ev-1' });
  expect(r.after.version).toBe(0);
  expect(r.ws.dirtyPersons.size).toBe(0);
};

describe('filtered person updates: what an ordinary event leaves alone', () => {
  it('the first event creates the person with every property, filtered ones included', () => {
    const { before } = afterFirst({ set: {} });
    expect(before.properties).toEqual({ ...FIRST, $creator_event_uuid: 'ev-1' });
  });

  it('a $pageview changing only filtered keys ($current_url, $pathname, $browser, $geoip_postal_code) writes nothing', () => {
    expectUntouched(
      afterFirst({
        set: {
          $current_url: 'https://shop.example/b',
          $pathname: '/b',
          $browser: 'Firefox',
          $geoip_postal_code: 'SW1',
          plan: 'free', // unchanged: not a trigger
        },
      }),
    );
  });

  it('a $set_once of a filtered key new to the person alone writes nothing', () => {
    expectUntouched(afterFirst({ setOnce: { $referrer: 'https://google.com/' } }));
  });

  it('an $unset of a key the person does not have writes nothing', () => {
    expectUntouched(afterFirst({ set: { $pathname: '/b' }, unset: ['missing'] }));
  });
});

describe('filtered person updates: what makes the whole update apply', () => {
  it('a changed key that is not filtered applies, and the changed filtered keys with it', () => {
    const { after, ws } = afterFirst({
      set: { plan: 'pro', $current_url: 'https://shop.example/b', $pathname: '/b' },
    });
    expect(after.properties).toMatchObject({
      plan: 'pro',
      $current_url: 'https://shop.example/b',
      $pathname: '/b',
    });
    expect(after.version).toBe(1);
    expect([...ws.dirtyPersons]).toEqual([after.id]);
  });

  it('a $set of a filtered key new to the person applies the whole $set', () => {
    const { after } = afterFirst({
      set: { $screen_width: 1728, $current_url: 'https://shop.example/b' },
    });
    expect(after.properties).toMatchObject({
      $screen_width: 1728,
      $current_url: 'https://shop.example/b',
    });
    expect(after.version).toBe(1);
  });

  it('a $set_once key new to the person and not filtered applies, and the $set rides along', () => {
    const { after } = afterFirst({
      setOnce: { $initial_current_url: 'https://shop.example/a', plan: 'never' },
      set: { $current_url: 'https://shop.example/b' },
    });
    expect(after.properties).toMatchObject({
      $initial_current_url: 'https://shop.example/a',
      plan: 'free',
      $current_url: 'https://shop.example/b',
    });
    expect(after.version).toBe(1);
  });

  it('an $unset of a present key applies and triggers the filtered changes too', () => {
    const { after } = afterFirst({ set: { $pathname: '/b' }, unset: ['plan'] });
    expect(after.properties).not.toHaveProperty('plan');
    expect(after.properties.$pathname).toBe('/b');
    expect(after.version).toBe(1);
  });

  it.each([
    ['$geoip_country_name', 'France'],
    ['$geoip_city_name', 'Paris'],
    ['$geoip_country_code', 'FR'],
  ])('a change of %s (not filtered) writes', (key, value) => {
    const { after } = afterFirst({ set: { [key]: value, $geoip_postal_code: '75001' } });
    expect(after.properties).toMatchObject({ [key]: value, $geoip_postal_code: '75001' });
    expect(after.version).toBe(1);
  });

  it.each(['$identify', '$create_alias', '$merge_dangerously', '$set'])(
    'a %s event writes filtered keys on their own',
    (event) => {
      const { after } = afterFirst({
        event,
        set: { $current_url: 'https://shop.example/b', $browser: 'Firefox' },
      });
      expect(after.properties).toMatchObject({
        $current_url: 'https://shop.example/b',
        $browser: 'Firefox',
      });
      expect(after.version).toBe(1);
    },
  );
});

describe('filtered person updates in time travel', () => {
  it('a person as of any time follows the same rule as the live fold, from the whole log or its slice', async () => {
    const events = log(
      captured({ distinctId: 'u', ts: T(1), uuid: 'ev-1', set: FIRST }),
      captured({ distinctId: 'u', ts: T(2), set: { $current_url: 'https://shop.example/b' } }),
      captured({ distinctId: 'u', ts: T(3), set: { $pathname: '/c', plan: 'pro' } }),
    );
    const ref = { kind: 'distinct_id', distinctId: 'u' } as const;
    const at = async (ts: string) => {
      const whole = personAsOfEvents(events, 1, ref, ts)!.properties;
      expect((await personAsOf(sliceDeps(events), 1, ref, ts))!.properties).toEqual(whole);
      return whole;
    };
    expect(await at(T(2))).toMatchObject({ $current_url: 'https://shop.example/a' });
    expect(await at(T(3))).toMatchObject({
      $current_url: 'https://shop.example/a',
      $pathname: '/c',
      plan: 'pro',
    });
    const live = emptyWorkingSet();
    for (const e of events) applyToWorkingSet(live, e);
    expect(await at(T(3))).toEqual([...live.persons.values()][0]!.properties);
  });
});

describe('the filtered list', () => {
  it("is PostHog's: capture's page and device keys but not $app_* or campaigns, GeoIP but not country or city names", () => {
    // PostHog's list also names $os_name, which capture folds into $os
    const automatic = new Set<string>([...EVENT_TO_PERSON_PROPERTIES, '$os_name']);
    const geoip = new Set([
      ...GEOIP_FIELDS.map((f) => `$geoip_${f}`),
      // fields PostHog's GeoIP may add that this server's databases do not fill
      '$geoip_subdivision_3_code',
      '$geoip_subdivision_3_name',
      '$geoip_country_confidence',
      '$geoip_postal_code_confidence',
      '$geoip_subdivision_1_confidence',
      '$geoip_subdivision_2_confidence',
    ]);
    for (const key of FILTERED_PERSON_UPDATE_PROPERTIES)
      expect(automatic.has(key) || geoip.has(key), key).toBe(true);
    expect([...automatic].filter((k) => !FILTERED_PERSON_UPDATE_PROPERTIES.has(k))).toEqual([
      '$app_build',
      '$app_name',
      '$app_namespace',
      '$app_version',
    ]);
    expect([...geoip].filter((k) => !FILTERED_PERSON_UPDATE_PROPERTIES.has(k))).toEqual([
      '$geoip_city_name',
      '$geoip_country_name',
      '$geoip_country_code',
      '$geoip_continent_name',
      '$geoip_continent_code',
    ]);
  });
});
