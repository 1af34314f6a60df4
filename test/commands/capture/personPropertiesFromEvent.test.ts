import { describe, expect, it } from 'vitest';
import { enrichCapturedEvent } from '../../../commands/capture/enrichCapturedEvent.ts';
import {
  AUTOMATIC_PERSON_PROPERTY_KEYS,
  initialKey,
  propertiesText,
  propertiesWithPersonSets,
} from '../../../commands/capture/model/personPropertiesFromEvent.ts';

const at = '2026-01-01T00:00:00.000Z';
/** What a reader of capture's record of a `$pageview` with these properties gets (no GeoIP). */
const addAutomaticPersonProperties = (properties: Record<string, unknown>) =>
  propertiesWithPersonSets(
    enrichCapturedEvent(
      {
        ...{ uuid: '0', projectId: 1, event: '$pageview', distinctId: 'd', properties },
        ...{ timestamp: at, sentAt: null, receivedAt: at, ip: null },
      },
      () => null,
    ),
  );

// Cases follow PostHog's `personInitialAndUTMProperties()` tests (nodejs ingestion).
describe('addAutomaticPersonProperties', () => {
  it('adds initial and utm properties; explicit $set / $set_once win', () => {
    const elements = [{ tag_name: 'a', nth_child: 1, nth_of_type: 2, attr__class: 'btn btn-sm' }];
    const properties = {
      distinct_id: 2,
      $browser: 'Chrome',
      $current_url: 'https://test.com',
      $os: 'Mac OS X',
      $os_version: '10.15.7',
      $browser_version: '95',
      $referring_domain: 'https://google.com',
      $referrer: 'https://google.com/?q=posthog',
      utm_medium: 'twitter',
      gclid: 'GOOGLE ADS ID',
      msclkid: 'BING ADS ID',
      $elements: elements,
      $app_build: 2,
      $app_name: 'my app',
      $app_namespace: 'com.posthog.myapp',
      $app_version: '1.2.3',
      $set: { $browser_version: 'manually $set value wins' },
      $set_once: { $initial_os_version: 'manually $set_once value wins' },
    };
    const { $set, $set_once, $elements, ...unchanged } = properties;
    const result = addAutomaticPersonProperties(properties);

    expect(result).toEqual({
      ...unchanged,
      $set: {
        $app_build: 2,
        $app_name: 'my app',
        $app_namespace: 'com.posthog.myapp',
        $app_version: '1.2.3',
        $browser: 'Chrome',
        $browser_version: 'manually $set value wins',
        $current_url: 'https://test.com',
        $os: 'Mac OS X',
        $os_version: '10.15.7',
        $referrer: 'https://google.com/?q=posthog',
        $referring_domain: 'https://google.com',
        gclid: 'GOOGLE ADS ID',
        msclkid: 'BING ADS ID',
        utm_medium: 'twitter',
      },
      $set_once: {
        $initial_app_build: 2,
        $initial_app_name: 'my app',
        $initial_app_namespace: 'com.posthog.myapp',
        $initial_app_version: '1.2.3',
        $initial_browser: 'Chrome',
        $initial_browser_version: '95',
        $initial_current_url: 'https://test.com',
        $initial_gclid: 'GOOGLE ADS ID',
        $initial_msclkid: 'BING ADS ID',
        $initial_os: 'Mac OS X',
        $initial_os_version: 'manually $set_once value wins',
        $initial_referrer: 'https://google.com/?q=posthog',
        $initial_referring_domain: 'https://google.com',
        $initial_utm_medium: 'twitter',
      },
    });
    // the elements become the event's chain (a column), not a property
    expect(result).not.toHaveProperty('$elements');
  });

  it('does not mutate its input', () => {
    const properties = { $browser: 'Firefox', $set: { a: 1 }, $set_once: { b: 2 } };
    const snapshot = structuredClone(properties);
    const result = addAutomaticPersonProperties(properties);
    expect(properties).toEqual(snapshot);
    expect(result.$set).not.toBe(properties.$set);
    expect(result.$set).toEqual({ a: 1, $browser: 'Firefox' });
  });

  it('initial current domain regression test', () => {
    expect(addAutomaticPersonProperties({ $current_url: 'https://test.com' })).toEqual({
      $current_url: 'https://test.com',
      $set_once: { $initial_current_url: 'https://test.com' },
      $set: { $current_url: 'https://test.com' },
    });
  });

  it('returns the properties unchanged when no key is present (a malformed $set counts as empty)', () => {
    const properties = { foo: 'bar', $set: 'not an object' };
    expect(addAutomaticPersonProperties(properties)).toEqual({ foo: 'bar', $set: {} });
  });

  it('replaces a malformed $set / $set_once once something is copied', () => {
    expect(addAutomaticPersonProperties({ utm_source: 'x', $set: 'oops', $set_once: [1] })).toEqual(
      {
        utm_source: 'x',
        $set: { utm_source: 'x' },
        $set_once: { $initial_utm_source: 'x' },
      },
    );
  });

  it('copies a null into $set (clears the latest touch) but never into $set_once', () => {
    expect(addAutomaticPersonProperties({ gclid: null, utm_source: 'news' })).toEqual({
      gclid: null,
      utm_source: 'news',
      $set: { gclid: null, utm_source: 'news' },
      $set_once: { $initial_utm_source: 'news' },
    });
  });

  it('treats $os_name as fallback for $os', () => {
    expect(addAutomaticPersonProperties({ $os_name: 'Android' })).toEqual({
      $os: 'Android',
      $os_name: 'Android',
      $set_once: { $initial_os: 'Android' },
      $set: { $os: 'Android' },
    });
    // $os takes precedence, $os_name stays on the event
    expect(addAutomaticPersonProperties({ $os: 'Windows', $os_name: 'Android' })).toEqual({
      $os: 'Windows',
      $os_name: 'Android',
      $set_once: { $initial_os: 'Windows' },
      $set: { $os: 'Windows' },
    });
  });

  it('fills $initial_os from $os_name when $os is null', () => {
    expect(addAutomaticPersonProperties({ $os: null, $os_name: 'iOS' })).toEqual({
      $os: null,
      $os_name: 'iOS',
      $set: { $os: null },
      $set_once: { $initial_os: 'iOS' },
    });
  });

  it('does not lift device OS from an $is_server event, but keeps campaign params', () => {
    expect(
      addAutomaticPersonProperties({
        $is_server: true,
        $os: 'Linux',
        $os_version: '5.15.0',
        utm_source: 'newsletter',
      }),
    ).toEqual({
      $is_server: true,
      $os: 'Linux',
      $os_version: '5.15.0',
      utm_source: 'newsletter',
      $set: { utm_source: 'newsletter' },
      $set_once: { $initial_utm_source: 'newsletter' },
    });
    expect(addAutomaticPersonProperties({ $is_server: true, $os_name: 'Linux' })).toEqual({
      $is_server: true,
      $os_name: 'Linux',
    });
  });

  it.each([
    ['client event maps $os', { $lib: 'web', $os: 'Linux' }, 'Linux'],
    ['client mobile via $os_name', { $lib: 'posthog-ios', $os_name: 'iOS' }, 'iOS'],
    ['no $is_server is treated as client', { $os: 'Linux' }, 'Linux'],
    ['$is_server false is treated as client', { $os: 'Linux', $is_server: false }, 'Linux'],
    [
      '$is_server "true" (string) is treated as client',
      { $os: 'Linux', $is_server: 'true' },
      'Linux',
    ],
    ['$is_server true skips $os', { $os: 'Linux', $is_server: true }, undefined],
    [
      '$is_server true skips regardless of lib',
      { $lib: 'web', $os: 'Linux', $is_server: true },
      undefined,
    ],
  ])('maps $os to $initial_os unless $is_server is true: %s', (_desc, properties, expected) => {
    const result = addAutomaticPersonProperties({ ...properties });
    const setOnce = result.$set_once as Record<string, unknown> | undefined;
    const set = result.$set as Record<string, unknown> | undefined;
    expect(setOnce?.$initial_os).toBe(expected);
    if (expected === undefined) expect(set?.$os).toBeUndefined();
  });

  it('covers every key of the current list with the $initial_ naming', () => {
    expect(AUTOMATIC_PERSON_PROPERTY_KEYS).toHaveLength(43); // $os_name is folded into $os
    const properties = Object.fromEntries(
      AUTOMATIC_PERSON_PROPERTY_KEYS.map((key) => [key, `v${key}`]),
    );
    const result = addAutomaticPersonProperties(properties);
    const setOnce = result.$set_once as Record<string, unknown>;
    expect(setOnce.$initial_raw_user_agent).toBe('v$raw_user_agent');
    expect(setOnce.$initial_sccid).toBe('vsccid');
    expect(setOnce.$initial__kx).toBe('v_kx');
    expect(setOnce).not.toHaveProperty('$initial_os_name');
    expect(result.$set).not.toHaveProperty('$os_name');
    expect(Object.keys(setOnce)).toHaveLength(43);
    expect(initialKey('$viewport_width')).toBe('$initial_viewport_width');
  });

  it('ignores inherited keys and keys not on the list', () => {
    const properties = Object.assign(Object.create({ $browser: 'inherited' }) as object, {
      $lib: 'web',
      email: 'a@b.c',
    });
    expect(addAutomaticPersonProperties(properties)).toEqual({ $lib: 'web', email: 'a@b.c' });
  });
});

describe('propertiesText', () => {
  // the order is part of the format: ClickHouse's replay of the log builds the same text in SQL
  const geo = { $geoip_city_name: 'Bracknell', $geoip_latitude: 51.4036 };
  const record = (
    properties: Record<string, unknown>,
    extra: { set?: string | null; setOnce?: string | null; geoip?: boolean; event?: string } = {},
  ) => ({
    ...{
      uuid: '0',
      projectId: 1,
      event: extra.event ?? '$pageview',
      distinctId: 'd',
      v: 2 as const,
    },
    ...{ geoip: extra.geoip ?? false, properties, timestamp: at, elementsChain: '' },
    ...{
      sentAt: null,
      receivedAt: at,
      ip: null,
      set: extra.set ?? null,
      setOnce: extra.setOnce ?? null,
    },
  });
  it.each([
    ['nothing to add', record({ a: 1 }), '{"a":1}'],
    [
      'the client sets first, then the added keys in the order of properties',
      record(
        { utm_source: 'u', gclid: null, $os: 'L' },
        { set: '{"$os":"mine","p":1}', setOnce: '{"f":1}' },
      ),
      '{"utm_source":"u","gclid":null,"$os":"L","$set":{"$os":"mine","p":1,"utm_source":"u","gclid":null},' +
        '"$set_once":{"f":1,"$initial_utm_source":"u","$initial_os":"L"}}',
    ],
    [
      "GeoIP's initials first in $set_once",
      record({ ...geo, $browser: 'x' }, { geoip: true, setOnce: '{"first":true}' }),
      '{"$geoip_city_name":"Bracknell","$geoip_latitude":51.4036,"$browser":"x","$set":{"$geoip_city_name":"Bracknell",' +
        '"$geoip_latitude":51.4036,"$browser":"x"},"$set_once":{"$initial_geoip_city_name":"Bracknell",' +
        '"$initial_geoip_latitude":51.4036,"first":true,"$initial_browser":"x"}}',
    ],
    [
      '$snapshot lifts nothing',
      record({ $browser: 'x' }, { event: '$snapshot', set: '{}' }),
      '{"$browser":"x","$set":{}}',
    ],
    ['empty properties', record({}, { set: '{"a":1}' }), '{"$set":{"a":1}}'],
  ])('%s', (_name, d, text) => {
    expect(propertiesText(d)).toBe(text);
  });
});
