import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lz64Bomb } from '../support/bombs.ts';
import { sendRaw } from '../support/captureClient.ts';
import {
  type ServerProcess,
  startServerProcess,
  stopServerProcess,
} from '../support/serverProcess.ts';
import { createTestDatabase } from '../support/testDatabase.ts';

/**
 * Small bodies that expand without bound when decoded. Each answers 4xx within 2 s, the server's
 * resident memory stays under 1 GB, and /_health answers right after. The server runs in its own
 * process so its memory is measured alone.
 */
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-bombs-'));
const KEY = 'phc_bombs_project_key_0001';
let server: ServerProcess;

beforeAll(async () => {
  server = await startServerProcess({
    DATA_DIR: dataDir,
    DATABASE_URL: await createTestDatabase(),
    INIT_PROJECT_API_KEY: KEY,
    LOG_LEVEL: 'error',
  });
}, 120_000);
afterAll(async () => {
  if (server) await stopServerProcess(server);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const rssBytes = () => {
  const status = fs.readFileSync(`/proc/${server.child.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
};

/** 100 MB of one character, gzipped (about 100 KB on the wire). */
const gzipBomb = (json: (filler: string) => string) =>
  gzipSync(json(' '.repeat(100 * 1024 * 1024)), { level: 9 });

const bombs: [
  string,
  () => { path: string; query?: string; headers: Record<string, string>; body: string | Buffer },
][] = [
  [
    'lz64: 260 KB that decodes to 5 × 10⁹ characters',
    () => ({
      path: '/e/',
      query: 'compression=lz64',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `data=${encodeURIComponent(lz64Bomb(100_000))}`,
    }),
  ],
  [
    'gzip: 100 KB that inflates to 100 MB',
    () => ({
      path: '/batch/',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipBomb((filler) => `{"api_key":"${KEY}","batch":[${filler}]}`),
    }),
  ],
  [
    'base64-wrapped gzip in a form field',
    () => ({
      path: '/e/',
      query: 'compression=gzip-js',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `data=${encodeURIComponent(gzipBomb((filler) => `{"api_key":"${KEY}","event":"x","distinct_id":"d","properties":{"p":"${filler}"}}`).toString('base64'))}`,
    }),
  ],
  [
    'JSON nested 1,000,000 levels deep',
    () => ({
      path: '/batch/',
      headers: { 'content-type': 'application/json' },
      body: `{"api_key":"${KEY}","batch":${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}}`,
    }),
  ],
  [
    'an $identify with 50,000 $set keys',
    () => ({
      path: '/e/',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        api_key: KEY,
        event: '$identify',
        distinct_id: 'huge',
        properties: {
          $set: Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, i])),
        },
      }),
    }),
  ],
];

describe('decompression and nesting bombs', () => {
  for (const [name, make] of bombs) {
    it(`${name}: 4xx within 2 s, RSS < 1 GB, /_health still answers`, async () => {
      const request = make();
      const started = Date.now();
      const answer = await sendRaw(server.url, { method: 'POST', ...request });
      const elapsed = Date.now() - started;
      console.log(
        `bomb "${name}": ${answer.status} in ${elapsed} ms, RSS ${(rssBytes() / 2 ** 20).toFixed(0)} MiB`,
      );
      expect(answer.status, answer.text.slice(0, 200)).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
      expect(elapsed).toBeLessThan(2_000);
      expect(rssBytes()).toBeLessThan(1024 ** 3);
      expect((await fetch(`${server.url}/_health`)).status).toBe(200);
    }, 60_000);
  }
});
