import type { EventCaptured } from '../../commands/capture/model/eventCaptured.ts';
import type { ChProjection } from '../../src/processing/clickhouseProjection.ts';
import { chunkPositions } from '../../src/processing/logInClickHouse.ts';
import { chString } from '../../src/runtime/postgresInClickHouse.ts';
import { PERSON_UUID_NAMESPACE } from '../persons/personsFold.ts';
import {
  CAPTURED_DATA_PARTS,
  PERSON_SETS_PARTS,
  PERSONLESS,
  propsReadable,
  withPersonSets,
} from '../shared/capturedDataSql.ts';
import type { DeletedEventsLookup, GroupTypesLookup } from './eventsProjection.ts';

const GROUP_SLOTS = [0, 1, 2, 3, 4] as const;

/** how long a chunk waits for the persons read model to reach it (retried every second) */
const PERSONS_WAIT_MS = 15 * 60_000;

/**
 * The group indexes come from the persons read model once it has passed the chunk; a replay with
 * no server running may have it rebuilt beside, swapped in only at its end (`rebuild all` after a
 * `log import`): the chunk waits, as the Node runner retries its batch.
 */
async function patiently<T>(lookup: () => Promise<T>): Promise<T> {
  const until = Date.now() + PERSONS_WAIT_MS;
  for (;;) {
    try {
      return await lookup();
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
}

/**
 * A `$groups` value written into properties as it is: a string of printable ASCII without `"`
 * and `\`, which ClickHouse and JSON.stringify print alike. Anything else goes to Node.
 */
const SAFE_GROUP_KEY = `'^"[ !#-\\\\[\\\\]-~]*"$'`;

/**
 * The events projection (`eventsProjection` with `withGroupIndexes` and `skippingDeletedEvents`)
 * as SQL over a chunk of the log, for a rebuild that ClickHouse reads the log for: each row as
 * `insert` writes it — person uuid (UUIDv5 of `<project>:<distinct id>`), `$group_N` appended to
 * properties and set in the columns, events of deleted persons left out. Rows whose text SQL
 * cannot reproduce byte for byte (see `capturedDataSql.ts`; a `$group_N` sent by the client; a
 * `$groups` key that is not plain ASCII) are returned for Node to insert.
 */
export const eventsFromLogChunk =
  (
    groupTypes: GroupTypesLookup,
    deleted: DeletedEventsLookup,
  ): NonNullable<ChProjection<EventCaptured>['fromLogChunk']> =>
  async (ch, chunk) => {
    const parts = `${CAPTURED_DATA_PARTS}, ${PERSON_SETS_PARTS},
      position(props, '"$groups":') > 0 AS _grouped,
      if(_grouped, JSONType(props, '$groups'), 'Null') AS _groups_type,
      if(_groups_type = 'Object' AND NOT ${PERSONLESS}, JSONExtractKeysAndValuesRaw(props, '$groups'), [])
        AS _groups,
      cut_ok AND sets_ok AND position(props, '"$group_') = 0
        AND ${propsReadable(['$groups'])} AND _groups_type != 'Array'
        AND arrayAll(x -> x.2 = 'null' OR match(x.2, ${SAFE_GROUP_KEY}), _groups)
        AND toUUIDOrNull(h.uuid) IS NOT NULL
        AND parseDateTime64BestEffortOrNull(t.timestamp, 6, 'UTC') IS NOT NULL
        AND parseDateTime64BestEffortOrNull(t.receivedAt, 6, 'UTC') IS NOT NULL AS row_ok`;
    // The projects of the chunk's rows, for their group types: the first `"projectId":` of a row
    // that passes `row_ok` is its own (the scalars before `properties` hold no `,"`), so this cheap
    // scan finds every project the insert needs (others found are only unused entries). The
    // persons read model must have passed the chunk's last captured event (not the chunk's end:
    // its checkpoint stays at the last event it folds).
    const last = chunk.types.get('EventCaptured')?.last;
    if (last === undefined) return [];
    const found = await ch.client.query({
      query: `SELECT DISTINCT toInt64OrZero(extract(data, '"projectId":([0-9]+)'))
        FROM ${chunk.table} WHERE type = 'EventCaptured'`,
      format: 'JSONCompactEachRow',
    });
    const projects = ((await found.json()) as [string | number][]).map(([p]) => Number(p));
    const indexes = await patiently(() => groupTypes(projects, last));
    const typeKeys = [...indexes].flatMap(([project, types]) =>
      [...types].map(([type, i]) => [chString(`${project}:${type}`), i + 1] as const),
    );
    // (type, index + 1, raw key) of each `$groups` entry whose type has an index
    const extras =
      typeKeys.length === 0
        ? "CAST([], 'Array(Tuple(String, Int16, String))')"
        : `arrayFilter(x -> x.2 > 0 AND x.3 != 'null', arrayMap(x -> (x.1,
            transform(concat(toString(h.projectId), ':', x.1), [${typeKeys.map(([k]) => k).join(', ')}],
              [${typeKeys.map(([, i]) => i).join(', ')}], 0), x.2), _groups))`;
    const cut = [...(await deleted(chunk.after + 1n))];
    const notDeleted =
      cut.length === 0
        ? ''
        : `AND position > transform(concat(toString(h.projectId), '|', h.distinctId),
            [${cut.map(([key]) => chString(key)).join(', ')}], [${cut.map(([, upTo]) => upTo).join(', ')}], 0)`;
    const slot = (i: number) =>
      `arrayStringConcat(arrayMap(x -> substring(x.3, 2, length(x.3) - 2), arrayFilter(x -> x.2 = ${i + 1}, extras)))`;
    await ch.client.command({
      query: `INSERT INTO ${ch.database}.events (uuid, event, properties, timestamp, team_id,
          project_id, distinct_id, person_id, elements_chain, created_at, ${GROUP_SLOTS.map((i) => `\`$group_${i}\``).join(', ')},
          _timestamp, _offset)
        WITH ${parts}, ${extras} AS extras,
          hex(SHA1(concat(unhex('${PERSON_UUID_NAMESPACE.replaceAll('-', '')}'), toString(h.projectId), ':', h.distinctId))) AS _sha
        SELECT toUUID(h.uuid), h.event,
          ${withPersonSets(`if(empty(extras), props, concat(substring(props, 1, length(props) - 1),
            arrayStringConcat(arrayMap(x -> concat(',"$group_', toString(x.2 - 1), '":', x.3), extras)), '}'))`)},
          parseDateTime64BestEffort(t.timestamp, 6, 'UTC'), h.projectId, h.projectId, h.distinctId,
          toUUID(lower(concat(substring(_sha, 1, 12), '5', substring(_sha, 14, 3),
            hex(bitOr(bitAnd(reinterpretAsUInt8(unhex(substring(_sha, 17, 2))), 63), 128)), substring(_sha, 19, 14)))),
          t.elementsChain, parseDateTime64BestEffort(t.receivedAt, 6, 'UTC'),
          ${GROUP_SLOTS.map(slot).join(', ')}, now(), position
        FROM ${chunk.table}
        WHERE type = 'EventCaptured' AND row_ok ${notDeleted}
        SETTINGS insert_deduplicate = 0`,
    });
    // What the insert did not take goes to Node: rows SQL cannot reproduce, and the deleted ones
    // (which Node leaves out again). Found by position, so row_ok is evaluated once.
    return chunkPositions(
      ch,
      `SELECT position FROM ${chunk.table} WHERE type = 'EventCaptured' AND position NOT IN (
         SELECT _offset FROM ${ch.database}.events WHERE _offset > ${chunk.after} AND _offset <= ${chunk.upTo})`,
    );
  };
