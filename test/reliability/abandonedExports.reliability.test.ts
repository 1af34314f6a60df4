import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';

/**
 * Persons CSV exports whose clients never read and then disconnect must give their database
 * connection back: 50 of them leave the pool whole within 5 s, and the API keeps answering.
 */
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
  // ~3 MB of CSV: far more than socket buffers hold, so an export that is not read blocks.
  const padding = 'x'.repeat(2_000);
  for (let chunk = 0; chunk < 3; chunk++) {
    await capture(
      t,
      Array.from({ length: 500 }, (_, i) => ({
        event: '$identify',
        distinct_id: `export-${chunk}-${i}`,
        properties: { $set: { padding, n: i } },
      })),
    );
  }
  const listed = await t.api('GET', `/api/projects/${t.projectId}/persons/?limit=1`);
  expect(listed.body.count).toBe(1500);
}, 120_000);
afterAll(async () => {
  await t?.close();
});

/** Starts an export and never reads the answer; resolves with the socket once the request is sent. */
function abandonedExport(): Promise<net.Socket> {
  const { hostname, port } = new URL(t.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(
        `GET /api/projects/${t.projectId}/persons/?format=csv HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${t.personalApiKey}\r\n\r\n`,
      );
      socket.pause(); // never read: the export meets backpressure
      resolve(socket);
    });
    socket.on('error', reject);
  });
}

describe('abandoned persons CSV exports', () => {
  it('50 clients that stop reading and go away leave the pool whole within 5 s', async () => {
    const pool = t.service.stores.pool;
    const sockets = await Promise.all(Array.from({ length: 50 }, abandonedExport));
    await new Promise((r) => setTimeout(r, 1_500)); // the exports run into backpressure
    for (const s of sockets) s.destroy();
    const gone = Date.now();
    let whole = false;
    while (Date.now() - gone < 5_000) {
      const { rows } = await pool.query<{ n: string }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction'",
      );
      if (Number(rows[0]!.n) === 0 && pool.waitingCount === 0) {
        whole = true;
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    console.log(`abandoned exports: pool whole after ${Date.now() - gone} ms`);
    expect(whole).toBe(true);
    expect((await t.api('GET', `/api/projects/${t.projectId}/persons/?limit=1`)).status).toBe(200);
  }, 60_000);
});
