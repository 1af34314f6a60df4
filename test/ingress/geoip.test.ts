import { beforeAll, describe, expect, it } from 'vitest';
import {
  COUNTRIES,
  GEOIP_FIELDS,
  type GeoIp,
  geoipProperties,
  openGeoIp,
  shouldSkipGeoip,
} from '../../ingress/geoip.ts';

let geo: GeoIp;
beforeAll(async () => {
  geo = await openGeoIp();
});

// Values come from the GeoLite2 build pinned by package-lock.json; the country-level results of these
// addresses (Google DNS, FDN's resolver in Paris, RIPE NCC in Amsterdam) have been stable for years.
describe('openGeoIp().lookup', () => {
  it('finds 8.8.8.8 in the United States with MaxMind-style names and coordinates', () => {
    expect(geo.lookup('8.8.8.8')).toEqual({
      country_name: 'United States',
      country_code: 'US',
      continent_name: 'North America',
      continent_code: 'NA',
      latitude: 37.751,
      longitude: -97.822,
      time_zone: 'America/Chicago',
    });
  });

  it('finds a European IPv4 address (80.67.169.12 → France)', () => {
    expect(geo.lookup('80.67.169.12')).toMatchObject({
      country_code: 'FR',
      country_name: 'France',
      continent_code: 'EU',
      continent_name: 'Europe',
      time_zone: 'Europe/Paris',
    });
  });

  it('finds IPv6 addresses in the IPv6 database', () => {
    expect(geo.lookup('2001:4860:4860::8888')).toMatchObject({
      country_code: 'US',
      continent_code: 'NA',
    });
    expect(geo.lookup('2001:67c:2e8:22::c100:68b')).toMatchObject({
      country_code: 'NL',
      country_name: 'Netherlands',
      time_zone: 'Europe/Amsterdam',
    });
  });

  it('returns city, postal code and both subdivision names where the data has them', () => {
    const fields = geo.lookup('81.2.69.142');
    expect(fields).toMatchObject({
      country_code: 'GB',
      country_name: 'United Kingdom',
      subdivision_1_name: 'England',
    });
    expect(typeof fields?.city_name).toBe('string');
    expect(typeof fields?.postal_code).toBe('string');
    expect(typeof fields?.subdivision_2_name).toBe('string');
    // the reduced database has no codes, radius or confidence
    expect(fields).not.toHaveProperty('subdivision_1_code');
    expect(fields).not.toHaveProperty('accuracy_radius');
  });

  it('rounds float32 coordinates back to GeoLite2 precision (4 decimals)', () => {
    const { latitude, longitude } = geo.lookup('80.67.169.12') ?? {};
    expect(latitude).toBe(Math.round(latitude! * 1e4) / 1e4);
    expect(String(longitude).split('.')[1]?.length ?? 0).toBeLessThanOrEqual(4);
  });

  it('looks IPv4-mapped IPv6 addresses up in the IPv4 database', () => {
    expect(geo.lookup('::ffff:8.8.8.8')).toEqual(geo.lookup('8.8.8.8'));
    expect(geo.lookup(' 8.8.8.8 ')).toEqual(geo.lookup('8.8.8.8'));
  });

  it.each(['10.0.0.1', '192.168.1.1', '172.16.0.5', '127.0.0.1', '::1', 'fe80::1', '0.0.0.0'])(
    'returns null for the private / local address %s',
    (ip) => expect(geo.lookup(ip)).toBeNull(),
  );

  it.each([
    '',
    'not-an-ip',
    '999.1.1.1',
    '8.8.8',
    '8.8.8.8:80',
    'gggg::1',
    '[2001:4860:4860::8888]',
  ])('returns null for the invalid string %j', (ip) => expect(geo.lookup(ip)).toBeNull());

  it('opens the databases once and answers lookups fast', async () => {
    expect(await openGeoIp()).toBe(geo);
    const started = performance.now();
    for (let i = 0; i < 20_000; i++) geo.lookup(`80.67.${i % 256}.${i % 250}`);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe('COUNTRIES', () => {
  it('covers every ISO country MaxMind lists, with MaxMind names', () => {
    expect(COUNTRIES.size).toBe(250);
    expect(COUNTRIES.get('DE')).toEqual({
      name: 'Germany',
      continentCode: 'EU',
      continentName: 'Europe',
    });
    expect(COUNTRIES.get('CD')?.name).toBe('Congo (DRC)');
    expect(COUNTRIES.get('BQ')?.name).toBe('Bonaire, Sint Eustatius and Saba');
    expect(COUNTRIES.get('AQ')?.continentCode).toBe('AN');
    expect(COUNTRIES.get('TR')?.continentName).toBe('Asia');
    expect(COUNTRIES.get('RU')?.continentName).toBe('Europe');
  });
});

describe('geoipProperties', () => {
  const fields = {
    city_name: 'Paris',
    country_code: 'FR',
    latitude: 48.8582,
    postal_code: '75001',
  };

  it('writes $geoip_*, $set.$geoip_* and $set_once.$initial_geoip_* for each field found', () => {
    expect(geoipProperties(fields)).toEqual({
      properties: {
        $geoip_city_name: 'Paris',
        $geoip_country_code: 'FR',
        $geoip_postal_code: '75001',
        $geoip_latitude: 48.8582,
      },
      set: {
        $geoip_city_name: 'Paris',
        $geoip_country_code: 'FR',
        $geoip_postal_code: '75001',
        $geoip_latitude: 48.8582,
      },
      setOnce: {
        $initial_geoip_city_name: 'Paris',
        $initial_geoip_country_code: 'FR',
        $initial_geoip_postal_code: '75001',
        $initial_geoip_latitude: 48.8582,
      },
    });
  });

  it("keeps PostHog's field order", () => {
    expect(Object.keys(geoipProperties(fields).properties)).toEqual([
      '$geoip_city_name',
      '$geoip_country_code',
      '$geoip_postal_code',
      '$geoip_latitude',
    ]);
  });

  it('clearMissing nulls every other field in $set only', () => {
    const result = geoipProperties(fields, { clearMissing: true });
    expect(Object.keys(result.set)).toHaveLength(GEOIP_FIELDS.length);
    expect(result.set.$geoip_time_zone).toBeNull();
    expect(result.set.$geoip_city_name).toBe('Paris');
    expect(Object.keys(result.setOnce)).toHaveLength(4);
    expect(result.properties).not.toHaveProperty('$geoip_time_zone');
  });

  it('gives nothing for a failed lookup, even with clearMissing', () => {
    const empty = { properties: {}, set: {}, setOnce: {} };
    expect(geoipProperties(null)).toEqual(empty);
    expect(geoipProperties(null, { clearMissing: true })).toEqual(empty);
  });

  it('maps a real lookup end to end', () => {
    const result = geoipProperties(geo.lookup('8.8.8.8'));
    expect(result.properties.$geoip_country_name).toBe('United States');
    expect(result.set.$geoip_continent_code).toBe('NA');
    expect(result.setOnce.$initial_geoip_time_zone).toBe('America/Chicago');
  });
});

describe('shouldSkipGeoip', () => {
  it.each([
    [{ $ip: '8.8.8.8' }, false],
    [{ $ip: '8.8.8.8', $geoip_disable: false }, false],
    [{ $ip: '8.8.8.8', $geoip_disable: 0 }, false],
    [{ $ip: '8.8.8.8', $geoip_disable: '' }, false],
    [{ $ip: '8.8.8.8', $geoip_disable: null }, false],
    [{ $ip: '8.8.8.8', $geoip_disable: true }, true],
    [{ $ip: '8.8.8.8', $geoip_disable: 'false' }, true], // a non-empty string is truthy, as in Hog
    [{ $ip: '8.8.8.8', $geoip_disable: 1 }, true],
    [{}, true],
    [{ $ip: '' }, true],
    [{ $ip: '   ' }, true],
    [{ $ip: null }, true],
    [{ $ip: 12345 }, true],
  ])('%j → %s', (properties, expected) => expect(shouldSkipGeoip(properties)).toBe(expected));
});
