import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { LogChunk } from '../../src/processing/logInClickHouse.ts';
import type { PositionedEvent } from '../../src/processing/projection.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { CAPTURED_DATA_PARTS } from '../shared/capturedDataSql.ts';
import type { PersonsFoldEvent } from './personsFold.ts';

/**
 * Where the fold's rules look inside `properties` (personsFold.ts: `applyCaptured`, `keysOf`,
 * `personUpdateOf`): a captured event whose properties hold none of these keys folds exactly as
 * one with empty properties. Prefixes as they appear in the text, opening quote included.
 */
const READ_KEYS = [
  '"$set', // $set, $set_once
  '"$unset"',
  '"$anon_distinct_id"',
  '"alias"',
  '"$group', // $groups, $group_type, $group_key, $group_set
  '"$process_person_profile"',
];

/** rows parsed between two turns of the event loop (a server answers requests meanwhile) */
const PARSE_SLICE = 5_000;

/**
 * The persons fold's events of a log chunk ClickHouse holds (issue #11: the rebuild beside the
 * ClickHouse one reads and decodes the log once). A captured event whose properties the fold does
 * not read comes over without them — the record's text with the `properties` object cut out
 * (`capturedDataSql.ts`), a fifth of its size — and every other row as its text; Node parses
 * each with `JSON.parse`, as reading the log does, so values are exactly the log's.
 *
 * The keys are searched in the text as written: a key spelt with a `\u` escape would hide, so a
 * record holding any `\u` comes whole. Text is handed over as TabSeparatedRaw; the log's `json`
 * column admits a tab or newline only between tokens, where a space means the same.
 */
export async function personsEventsFromLogChunk(
  ch: ClickHouse,
  chunk: LogChunk,
  eventTypes: readonly string[],
): Promise<PositionedEvent<PersonsFoldEvent>[]> {
  const types = eventTypes.filter((t) => chunk.types.has(t));
  if (types.length === 0) return [];
  const keys = READ_KEYS.map((k) => `'${k}'`).join(', ');
  const result = await ch.client.query({
    query: `WITH ${CAPTURED_DATA_PARTS},
        type = 'EventCaptured' AND cut_ok AND position(data, '\\\\u') = 0
          AND NOT multiSearchAny(props, [${keys}]) AS slim,
        if(slim, concat(substring(data, 1, _ps - 1), ',', substring(data, _te + 2)), data) AS text
      SELECT position, slim, type,
        if(position(text, '\\t') > 0 OR position(text, '\\n') > 0,
          replaceRegexpAll(text, '[\\t\\n]', ' '), text)
      FROM ${chunk.table}
      WHERE type IN (${types.map((t) => `'${t}'`).join(', ')})
      ORDER BY position`,
    format: 'TabSeparatedRaw',
  });
  const body = await result.text();
  const events: PositionedEvent<PersonsFoldEvent>[] = [];
  let at = 0;
  while (at < body.length) {
    for (let n = 0; n < PARSE_SLICE && at < body.length; n++) {
      const tab1 = body.indexOf('\t', at);
      const tab2 = body.indexOf('\t', tab1 + 1);
      const tab3 = body.indexOf('\t', tab2 + 1);
      let end = body.indexOf('\n', tab3 + 1);
      if (end < 0) end = body.length;
      const data = JSON.parse(body.slice(tab3 + 1, end));
      if (body.charCodeAt(tab1 + 1) === 49 /* '1': slim */) data.properties = {};
      events.push({
        type: body.slice(tab2 + 1, tab3),
        data,
        position: BigInt(body.slice(at, tab1)),
      } as PositionedEvent<PersonsFoldEvent>);
      at = end + 1;
    }
    await yieldToLoop();
  }
  return events;
}
