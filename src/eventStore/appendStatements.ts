import pg from 'pg';

/*
 * An append's statements, batched into as few round trips as the protocol allows: on a busy machine
 * each round trip waits for both processes to be scheduled, and a commit of single-event capture
 * requests is mostly round trips (docs/PERFORMANCE.md, "COPY into the log"). Several statements in
 * one query text go through the simple query protocol, so values are inlined as escaped literals.
 */

/**
 * A uuid or plain name needs no escaping: `pg.escapeLiteral` builds its result a character at a
 * time, ≈ 2 KB of garbage an id (a /batch append names 100 ids).
 */
const PLAIN = /^[\w:.-]*$/;
const literal = (v: string) => (PLAIN.test(v) ? `'${v}'` : pg.escapeLiteral(v));
const textArray = (values: readonly string[], type: 'text' | 'uuid') =>
  `ARRAY[${values.map(literal).join(',')}]::${type}[]`;

export type AppendStart = {
  heads: { name: string; revision: string | null }[];
  existing: { id: string; position: string; revision: string }[];
  /** the first of the positions reserved for this append, one an id (undefined for no ids) */
  firstDrawn: bigint | undefined;
};

/**
 * One round trip: BEGIN, the append lock, the streams' heads, the ids already in the log, and a
 * position for each id reserved as one range of the sequence. Only lock holders draw, so the
 * range is this append's alone; positions it does not use (ids already in the log) stay unused, a
 * gap as a rollback leaves.
 */
export async function beginAppend(
  client: pg.PoolClient,
  lockKey: bigint,
  names: readonly string[],
  ids: readonly string[],
): Promise<AppendStart> {
  const draw = ids.length;
  const statements = [
    'BEGIN',
    `SELECT pg_advisory_xact_lock(${lockKey.toString()})`,
    `SELECT s.name, (SELECT revision FROM event_log WHERE stream_name = s.name ORDER BY revision DESC LIMIT 1) AS revision
       FROM unnest(${textArray(names, 'text')}) AS s(name)`,
    `SELECT id, position, revision FROM event_log WHERE id = ANY(${textArray(ids, 'uuid')})`,
  ];
  if (draw > 0)
    statements.push(
      `SELECT setval(seq, nextval(seq) + ${draw} - 1) AS last
         FROM (SELECT pg_get_serial_sequence('event_log', 'position')::regclass AS seq) AS s`,
    );
  const results = (await client.query(statements.join(';\n'))) as unknown as pg.QueryResult[];
  return {
    heads: results[2]!.rows,
    existing: results[3]!.rows,
    firstDrawn: draw > 0 ? BigInt(results[4]!.rows[0].last) - BigInt(draw) + 1n : undefined,
  };
}

/** One round trip: the wake-up for subscribers (delivered at commit) and COMMIT. */
export async function commitAppend(
  client: pg.PoolClient,
  channel: string,
  position: bigint | undefined,
): Promise<void> {
  await client.query(
    position === undefined
      ? 'COMMIT'
      : `SELECT pg_notify(${literal(channel)}, '${position.toString()}');\nCOMMIT`,
  );
}
