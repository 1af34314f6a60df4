import {
  AUTOMATIC_PERSON_PROPERTY_KEYS,
  GEOIP_PROPERTY_KEYS,
  initialKey,
  SERVER_HOST_OS_KEYS,
  WITHOUT_AUTOMATIC_PROPERTIES,
} from '../../commands/capture/model/personPropertiesFromEvent.ts';

/**
 * ClickHouse SQL over the log's text of an `EventCaptured` (`data`, a row of a `LogChunk`), for
 * read models replayed in ClickHouse. `props` is the exact text `JSON.stringify(data.properties)`
 * gives (what the events projection writes), cut out of `data` rather than parsed and printed
 * again, because ClickHouse prints JSON its own way (`\u001F`, an escaped U+2028, doubles).
 *
 * The cut relies on the record's shape, as the capture handler writes it: `properties` is the only
 * object member, the scalars before it, `timestamp` right after it. Inside a JSON string `,"` and
 * `},"` cannot occur (a quote is always escaped there), so the first `,"properties":{` and the last
 * `},"timestamp":"` are top-level, and `head` and `tail` parse only when the record has that shape.
 * A row where `cut_ok` is false (another layout, a lone surrogate ClickHouse refuses) is replayed
 * by Node instead; so is a record an older release wrote with a NUL or a lone surrogate (a `\u0000`
 * or `\ud800`–`\udfff` escape; JSON.stringify writes an emoji as itself), which Node reads as
 * U+FFFD (src/core/storable.ts) and SQL would copy as it is.
 *
 * Use as a WITH list: `WITH ${CAPTURED_DATA_PARTS} SELECT … FROM <chunk>`.
 */
const UNSTORABLE_ESCAPE = String.raw`position(data, '\\u') > 0 AND match(data, '\\\\u(0000|[dD][89a-fA-F])')`;

export const CAPTURED_DATA_PARTS = `
  position(data, ',"properties":{') AS _ps,
  position(reverse(data), reverse('},"timestamp":"')) AS _rt,
  length(data) - _rt - 13 AS _te,
  concat(substring(data, 1, _ps - 1), '}') AS head,
  concat('{', substring(data, _te + 2)) AS tail,
  substring(data, _ps + 14, _te - _ps - 13) AS props,
  JSONExtract(head, 'Tuple(uuid String, projectId Int64, event String, distinctId String)') AS h,
  JSONExtract(tail, 'Tuple(timestamp String, receivedAt String, elementsChain String)') AS t,
  _ps > 0 AND _rt > 0 AND _te > _ps AND isValidJSON(head) AND isValidJSON(tail)
    AND NOT (${UNSTORABLE_ESCAPE}) AS cut_ok`;

/**
 * A top-level property of `props` must be read (`keys` appear in its text): then `props` must
 * parse, or the row goes to Node. Checked only where a key appears, since parsing costs.
 */
export const propsReadable = (keys: readonly string[]) =>
  `if(${keys.map((k) => `position(props, '"${k}":') > 0`).join(' OR ')}, isValidJSON(props), 1)`;

/** `properties.$process_person_profile === false`, for a `props` that is readable. */
export const PERSONLESS = `(position(props, '"$process_person_profile":false') > 0
  AND JSONExtractRaw(props, '$process_person_profile') = 'false')`;

const sqlList = (values: readonly string[]) => `[${values.map((v) => `'${v}'`).join(', ')}]`;

/** key → 1 GeoIP, 2 automatic, 3 automatic but not from a server SDK (a hash lookup a key) */
const KEY_KINDS = (() => {
  const keys = [...GEOIP_PROPERTY_KEYS, ...AUTOMATIC_PERSON_PROPERTY_KEYS];
  const kinds = keys.map((k) =>
    GEOIP_PROPERTY_KEYS.includes(k) ? 1 : SERVER_HOST_OS_KEYS.includes(k) ? 3 : 2,
  );
  return `transform(x.1, ${sqlList(keys)}, [${kinds.join(', ')}], 0)`;
})();

/** `$initial_<key>` of a key, as `initialKey` builds it (keys hold `$` only first) */
const INITIAL_KEY = `concat('$initial_', if(startsWith(x.1, '$'), substring(x.1, 2), x.1))`;

/**
 * A value ClickHouse prints as JSON.stringify does: it prints the raw values it extracts again,
 * its own way (`\u001F`, an escaped U+2028, `-0`, exponents), so only strings without an escape
 * of `\u`, integers and plain decimals of up to 15 digits each side, booleans and null qualify.
 */
const PRINTS_ALIKE = String.raw`multiIf(startsWith(x.2, '"'), position(x.2, '\\u') = 0,
  x.2 IN ('true', 'false', 'null'), 1,
  match(x.2, '^-?(0|[1-9][0-9]{0,14})(\\.[0-9]{1,15})?$') AND x.2 != '-0' AND NOT match(x.2, '^-?0\\.0000'))`;

/**
 * The person sets of a compact (`v` 2) record as text, as `propertiesText`
 * (commands/capture/model/personPropertiesFromEvent.ts) appends them to its properties:
 * `person_sets` is `,"$set":{…},"$set_once":{…}` (either may be absent; '' for an older record,
 * whose `props` hold them). `sets_ok` is false where SQL cannot build the same text (a value
 * ClickHouse prints its own way, a client set naming a GeoIP key, `props` with a key to copy
 * that do not parse):
 * such rows go to Node. Use after `CAPTURED_DATA_PARTS` in a WITH list.
 */
export const PERSON_SETS_PARTS = `
  JSONExtract(head, 'Tuple(v Int64, geoip Bool)') AS _hv,
  _hv.v = 2 AS _v2,
  JSONExtract(tail, 'Tuple(set Nullable(String), setOnce Nullable(String))') AS _ts,
  coalesce(_ts.set, '') AS _set,
  coalesce(_ts.setOnce, '') AS _once,
  if(_v2, JSONExtractKeysAndValuesRaw(props), []) AS _kv,
  if(_v2 AND _set != '', JSONExtractKeys(_set), []) AS _set_keys,
  if(_v2 AND _once != '', JSONExtractKeys(_once), []) AS _once_keys,
  _hv.geoip AS _geo,
  NOT has(${sqlList(WITHOUT_AUTOMATIC_PROPERTIES)}, h.event) AS _auto,
  has(_kv, ('$is_server', 'true')) AS _server,
  arrayMap(x -> (x.1, x.2, ${KEY_KINDS}), _kv) AS _kk,
  arrayFilter(x -> x.3 = 1 AND _geo, _kk) AS _geo_kv,
  arrayFilter(x -> (x.3 = 1 AND _geo) OR (_auto AND (x.3 = 2 OR (x.3 = 3 AND NOT _server))
    AND NOT has(_set_keys, x.1)), _kk) AS _set_add,
  arrayFilter(x -> _auto AND (x.3 = 2 OR (x.3 = 3 AND NOT _server)) AND x.2 != 'null'
    AND NOT has(_once_keys, ${INITIAL_KEY}), _kk) AS _once_add,
  arrayStringConcat(arrayFilter(s -> s != '', [substring(_set, 2, length(_set) - 2),
    arrayStringConcat(arrayMap(x -> concat('"', x.1, '":', x.2), _set_add), ',')]), ',') AS _set_text,
  arrayStringConcat(arrayFilter(s -> s != '', [
    arrayStringConcat(arrayMap(x -> concat('"', ${INITIAL_KEY}, '":', x.2), _geo_kv), ','),
    substring(_once, 2, length(_once) - 2),
    arrayStringConcat(arrayMap(x -> concat('"', ${INITIAL_KEY}, '":', x.2), _once_add), ',')]), ',') AS _once_text,
  if(_v2, concat(
    if(_set != '' OR notEmpty(_set_add), concat(',"$set":{', _set_text, '}'), ''),
    if(_once != '' OR notEmpty(_geo_kv) OR notEmpty(_once_add), concat(',"$set_once":{', _once_text, '}'), '')),
    '') AS person_sets,
  NOT _v2 OR ((notEmpty(_kv) OR NOT (_geo OR multiSearchAny(props, ${sqlList(AUTOMATIC_PERSON_PROPERTY_KEYS.map((k) => `"${k}":`))})))
    AND NOT (_geo AND hasAny(_set_keys, ${sqlList(GEOIP_PROPERTY_KEYS)}))
    AND NOT (_geo AND hasAny(_once_keys, ${sqlList(GEOIP_PROPERTY_KEYS.map(initialKey))}))
    AND arrayAll(x -> ${PRINTS_ALIKE}, arrayConcat(_set_add, _once_add))) AS sets_ok`;

/** `properties` (a JSON object's text) with the person sets of `PERSON_SETS_PARTS` appended. */
export const withPersonSets = (properties: string) =>
  `if(person_sets = '', ${properties}, if(${properties} = '{}', concat('{', substring(person_sets, 2), '}'),
    concat(substring(${properties}, 1, length(${properties}) - 1), person_sets, '}')))`;
