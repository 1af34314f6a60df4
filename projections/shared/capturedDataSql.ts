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
