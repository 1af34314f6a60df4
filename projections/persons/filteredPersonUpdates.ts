import type { PersonUpdate, Properties } from './personUpdates.ts';

/**
 * PostHog's filtered person updates (plugin-server `person-property-utils.ts`
 * `FILTERED_PERSON_UPDATE_PROPERTIES` and `person-update.ts` `shouldUpdatePersonIfOnlyChange`):
 * keys that change often and are not worth a write of the person on their own. Most come from
 * capture's automatic person properties (`EVENT_TO_PERSON_PROPERTIES`, a superset: `$app_*` and
 * campaign keys still trigger), the rest from GeoIP, where only country and city names are worth
 * keeping current. The persons read model decides what it writes, so the list lives here, beside
 * the fold, not in capture's published model.
 */
export const FILTERED_PERSON_UPDATE_PROPERTIES: ReadonlySet<string> = new Set([
  // change on every page view
  '$current_url',
  '$pathname',
  '$referring_domain',
  '$referrer',
  // change when a window is resized
  '$screen_height',
  '$screen_width',
  '$viewport_height',
  '$viewport_width',
  // browser and device
  '$browser',
  '$browser_version',
  '$device_type',
  '$raw_user_agent',
  '$os',
  '$os_name',
  '$os_version',
  // GeoIP, all but $geoip_country_name and $geoip_city_name (and the codes PostHog does not list)
  '$geoip_postal_code',
  '$geoip_time_zone',
  '$geoip_latitude',
  '$geoip_longitude',
  '$geoip_accuracy_radius',
  '$geoip_subdivision_1_code',
  '$geoip_subdivision_1_name',
  '$geoip_subdivision_2_code',
  '$geoip_subdivision_2_name',
  '$geoip_subdivision_3_code',
  '$geoip_subdivision_3_name',
  '$geoip_city_confidence',
  '$geoip_country_confidence',
  '$geoip_postal_code_confidence',
  '$geoip_subdivision_1_confidence',
  '$geoip_subdivision_2_confidence',
]);

/** Events that state who a person is: they update every key they carry, filtered or not. */
export const PERSON_EVENTS: ReadonlySet<string> = new Set([
  '$identify',
  '$create_alias',
  '$merge_dangerously',
  '$set',
]);

/**
 * Whether an event's `$set` / `$set_once` / `$unset` is worth writing to an existing person: a
 * person event always is; otherwise a `$set` key new to the person or a changed key that is not
 * filtered, a `$set_once` key new to the person and not filtered, or an `$unset` of a present key.
 * When it is, the caller applies the whole update (filtered keys ride along, as in PostHog); when
 * it is not, the person stays exactly as it was.
 *
 * Decided per event, from the person and the event alone: PostHog's batch store skips the write
 * only when every event of its batch was filtered-only, which makes the stored person depend on
 * where batches were cut. Here a rebuild and time travel reproduce the live read model whatever
 * the batch boundaries. "Changed" is `applyPersonUpdate`'s: a different value, or any object.
 */
export function isPersonUpdateWorthAWrite(
  event: string,
  current: Properties,
  update: PersonUpdate,
): boolean {
  if (PERSON_EVENTS.has(event)) return true;
  // for-in over own keys, not Object.keys/entries: no arrays built for every event of a batch
  for (const key in update.setOnce)
    if (
      Object.hasOwn(update.setOnce, key) &&
      !(key in current) &&
      !FILTERED_PERSON_UPDATE_PROPERTIES.has(key)
    )
      return true;
  for (const key in update.set) {
    if (!Object.hasOwn(update.set, key)) continue;
    if (!(key in current)) return true;
    const value = update.set[key];
    const changed = current[key] !== value || typeof value === 'object';
    if (changed && !FILTERED_PERSON_UPDATE_PROPERTIES.has(key)) return true;
  }
  return update.unset.some((key) => key in current);
}
