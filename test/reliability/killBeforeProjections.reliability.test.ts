import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { sendBatch, serversOnOneDataDir } from '../support/serverProcess.ts';
import { createTestDatabase } from '../support/testDatabase.ts';

/**
 * Issue #11: the ingestion stage — the projections that turn acknowledged log records into the
 * persons read model and the ClickHouse events table, in the server process — is killed (`kill -9`)
 * while it is behind the acknowledgements. After a restart every acknowledged event is in the
 * events table exactly once and every person holds its last `$set` (order per distinct id kept).
 * Issue #27: the same with three ingestion workers (INGESTION_WORKERS=3), killed together while
 * each may hold a batch of its partition open.
 */
const KEY = 'phc_kill_projections_key_01';
const PERSONAL = 'phx_kill_projections_key_01';
const CLIENTS = 6;

type Sent = { uuid: string; seq: number };

/** One /batch/ for one client's distinct id, each event `$set`ting its sequence number. */
const send = (url: string, client: number, events: readonly Sent[]) =>
  sendBatch(
    url,
    KEY,
    events.map(({ uuid, seq }) => ({
      event: 'load',
      distinct_id: `kp-${client}`,
      uuid,
      properties: { seq, $set: { seq } },
    })),
  );

const api = async (url: string, route: string) => {
  const res = await fetch(`${url}${route}`, { headers: { authorization: `Bearer ${PERSONAL}` } });
  expect(res.status, route).toBe(200);
  return (await res.json()) as Record<string, unknown>;
};

/** How far each read model's checkpoint is behind the last captured event in the log. */
const lagBehindLog = async (databaseUrl: string) => {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const head = await client.query<{ p: string }>(
      "SELECT max(position)::text AS p FROM event_log WHERE type = 'EventCaptured'",
    );
    const checkpoints = await client.query<{ id: string; position: string }>(
      "SELECT id, position::text FROM projection_checkpoints WHERE id LIKE 'persons@%' OR id LIKE 'clickhouse:events@%'",
    );
    const last = BigInt(head.rows[0]!.p);
    return Object.fromEntries(
      checkpoints.rows.map((r) => [r.id, Number(last - BigInt(r.position))] as const),
    );
  } finally {
    await client.end();
  }
};

describe.each([1, 3])('kill -9 of the ingestion stage, INGESTION_WORKERS=%i', (workers) => {
  const servers = serversOnOneDataDir('hogstream-kill-projections-');
  let databaseUrl: string;
  afterAll(() => servers.cleanUp());
  const start = () =>
    servers.start({
      DATABASE_URL: databaseUrl,
      INIT_PROJECT_API_KEY: KEY,
      INIT_PERSONAL_API_KEY: PERSONAL,
      LOG_LEVEL: 'error',
      INGESTION_WORKERS: String(workers),
    });

  it('finds every acknowledged event exactly once in every read model after a restart', async () => {
    databaseUrl = await createTestDatabase();
    const first = await start();
    const acknowledged = new Set<string>();
    const unanswered: { client: number; events: Sent[] }[] = [];
    const lastSeq = new Array<number>(CLIENTS).fill(0);
    let killed = false;
    const clients = Array.from({ length: CLIENTS }, async (_, client) => {
      while (!killed) {
        const events = Array.from({ length: 50 }, () => ({
          uuid: randomUUID(),
          seq: ++lastSeq[client]!,
        }));
        if (await send(first.url, client, events)) for (const e of events) acknowledged.add(e.uuid);
        else unanswered.push({ client, events });
      }
    });
    await new Promise((r) => setTimeout(r, 2_000));
    first.child.kill('SIGKILL');
    killed = true;
    await Promise.all(clients);
    expect(acknowledged.size).toBeGreaterThan(500);

    // The kill must land between the acknowledgement and the projections, or this proves nothing.
    const lagAtKill = await lagBehindLog(databaseUrl);
    expect(Object.keys(lagAtKill)).toHaveLength(2);
    expect(Math.max(...Object.values(lagAtKill))).toBeGreaterThan(0);

    // Restart on the same data; clients retry what got no answer (same uuids), as SDKs do.
    const second = await start();
    for (const { client, events } of unanswered)
      expect(await send(second.url, client, events)).toBe(true);
    for (const { events } of unanswered) for (const e of events) acknowledged.add(e.uuid);

    const deadline = Date.now() + 60_000;
    while (Object.values(await lagBehindLog(databaseUrl)).some((lag) => lag > 0)) {
      expect(Date.now(), 'projections did not catch up in 60 s').toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 200));
    }

    const projects = (await api(second.url, '/api/projects/')) as { results: { id: number }[] };
    const projectId = projects.results[0]!.id;
    const select = encodeURIComponent(JSON.stringify(['count()', 'count(DISTINCT uuid)']));
    const counted = (await api(
      second.url,
      `/api/projects/${projectId}/events/?event=load&select=${select}`,
    )) as { results: [number, number][] };
    const [events, distinctUuids] = counted.results[0]!.map(Number);
    console.log(
      `kill -9 before the projections (${workers} ingestion workers): lag at kill ${JSON.stringify(lagAtKill)}, ${acknowledged.size} acknowledged, ${events} in ClickHouse (${distinctUuids} distinct)`,
    );
    expect({ events, distinctUuids }).toEqual({
      events: acknowledged.size,
      distinctUuids: acknowledged.size,
    });
    // Every event sent was acknowledged in the end, so equal counts mean the same set.
    const sent = lastSeq.reduce((a, b) => a + b, 0);
    expect(acknowledged.size).toBe(sent);

    for (let client = 0; client < CLIENTS; client++) {
      const persons = (await api(
        second.url,
        `/api/projects/${projectId}/persons/?distinct_id=kp-${client}`,
      )) as { results: { properties: Record<string, unknown>; distinct_ids: string[] }[] };
      expect(persons.results).toHaveLength(1);
      expect(persons.results[0]!.distinct_ids).toEqual([`kp-${client}`]);
      expect(persons.results[0]!.properties.seq).toBe(lastSeq[client]);
    }
  }, 240_000);
});
