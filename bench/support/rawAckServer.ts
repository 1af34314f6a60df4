/**
 * A prototype of issue #11's first direction, for `bench:capture -- --raw-ack` only: acknowledge a
 * capture request once the request itself, as received, is durably in the log (one record per
 * request, as PostHog writes the raw request to Kafka), leaving normalisation to a later stage that
 * this prototype does not run. What it measures is how fast the acknowledgement alone could be on
 * this machine: Fastify parsing the body (as the ceiling), the project key hashed and looked up,
 * and the product's group-committed Postgres append of one `CaptureRequestReceived` a request.
 * DATA_DIR: where its embedded Postgres lives. Not a product path: nothing reads these records.
 */
import crypto from 'node:crypto';
import Fastify from 'fastify';
import { createPool } from '../../src/db/postgres.ts';
import { migrateEventLog } from '../../src/eventStore/eventLogMigrations.ts';
import { createGroupCommitter } from '../../src/eventStore/groupCommit.ts';
import { createPostgresEventStore } from '../../src/eventStore/postgresEventStore.ts';
import { startEmbeddedPostgres } from '../../src/runtime/embeddedPostgres.ts';

const TOKEN = process.env.RAW_ACK_TOKEN ?? 'phc_bench_project_key';
const sha256 = (s: string) => crypto.hash('sha256', s);
const projects = new Map([[sha256(TOKEN), 1]]);

const postgres = await startEmbeddedPostgres(process.env.DATA_DIR!);
const pool = createPool(postgres.connectionString, 10);
await migrateEventLog(pool);
const store = createPostgresEventStore(pool);
const committer = createGroupCommitter(store);

const app = Fastify({ bodyLimit: 20 * 1024 * 1024 });
const acknowledge = async (
  request: { body: unknown; ip: string; headers: Record<string, unknown> },
  reply: { code(n: number): unknown },
) => {
  const body = request.body as { api_key?: unknown; token?: unknown; batch?: unknown[] };
  const token = body.api_key ?? body.token;
  const projectId = typeof token === 'string' ? projects.get(sha256(token)) : undefined;
  if (projectId === undefined) {
    reply.code(401);
    return { type: 'authentication_error', code: 'invalid_api_key', detail: 'bad key', attr: null };
  }
  const receivedAt = new Date().toISOString();
  await committer.append([
    {
      streamName: `capture-requests-${projectId}`,
      expectedRevision: 'any',
      events: [
        {
          type: 'CaptureRequestReceived',
          data: {
            receivedAt,
            ip: request.ip,
            userAgent: request.headers['user-agent'] ?? null,
            forwardedFor: request.headers['x-forwarded-for'] ?? null,
            body,
          },
          metadata: { projectId, occurredAt: receivedAt },
        },
      ],
    },
  ]);
  return { status: 1 };
};
app.post('/batch/', acknowledge);
app.post('/capture/', acknowledge);
const url = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`listening on ${url}`);
process.on('SIGTERM', () => {
  void (async () => {
    await app.close();
    await committer.drain();
    await store.close();
    await pool.end();
    await postgres.stop();
    process.exit(0);
  })();
});
