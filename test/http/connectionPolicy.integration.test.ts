import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/testService.ts';

// Issue #26: sockets that never send a byte were closed only by Node's default header timeout,
// 60–90 s after they connected, and nothing bounded their number (24,000 took the process down).
let idle: TestService;
let capped: TestService;
beforeAll(async () => {
  [idle, capped] = await Promise.all([
    startTestService({ HTTP_HEADERS_TIMEOUT_MS: '2000' }),
    startTestService({ HTTP_MAX_CONNECTIONS: '20' }),
  ]);
}, 120_000);
afterAll(async () => {
  await Promise.all([idle?.close(), capped?.close()]);
});

const portOf = (t: TestService) => Number(new URL(t.url).port);

/** A socket that connects and then sends nothing; `closedAt` is when the server closed it. */
type Silent = { socket: net.Socket; closedAt: number | undefined };
function openSilent(t: TestService): Promise<Silent> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(portOf(t), '127.0.0.1');
    const silent: Silent = { socket, closedAt: undefined };
    socket.on('error', () => {}); // a reset is a close too
    // Read what comes (a 408, say): a paused socket would never see the server's close.
    socket.resume();
    socket.on('close', () => {
      silent.closedAt = Date.now();
    });
    socket.once('connect', () => resolve(silent));
    socket.once('error', reject);
  });
}

async function healthMs(t: TestService): Promise<number> {
  const started = Date.now();
  const res = await fetch(`${t.url}/_health`, { signal: AbortSignal.timeout(5_000) });
  expect(res.status).toBe(200);
  return Date.now() - started;
}

describe('connection policy', () => {
  it('closes sockets that never send a byte within the header timeout while /_health answers', async () => {
    const openedAt = Date.now();
    const sockets = await Promise.all(Array.from({ length: 300 }, () => openSilent(idle)));
    const healthTimes: number[] = [];
    // 2 s timeout, checked every second: every socket closed within 4 s of being opened.
    while (Date.now() - openedAt < 4_500 && sockets.some((s) => s.closedAt === undefined)) {
      healthTimes.push(await healthMs(idle));
      await new Promise((r) => setTimeout(r, 100));
    }
    const open = sockets.filter((s) => s.closedAt === undefined).length;
    for (const s of sockets) s.socket.destroy();
    expect(open).toBe(0);
    const latest = Math.max(...sockets.map((s) => s.closedAt! - openedAt));
    expect(latest).toBeGreaterThanOrEqual(1_900); // closed by the timeout, not at once
    expect(latest).toBeLessThan(4_500);
    expect(Math.max(...healthTimes)).toBeLessThan(1_000);
  });

  it('refuses connections past the maximum while the open ones keep working', async () => {
    const held = await Promise.all(Array.from({ length: 20 }, () => openSilent(capped)));
    try {
      await refusedPastTheMaximum(held);
    } finally {
      for (const s of held) s.socket.destroy();
    }
    await new Promise((r) => setTimeout(r, 200));
    // Once connections are given back, new ones are served again.
    expect(await healthMs(capped)).toBeLessThan(1_000);
  });
});

async function refusedPastTheMaximum(held: Silent[]): Promise<void> {
  // One more: closed by the server at once, without a byte.
  const extra = await openSilent(capped);
  await new Promise((r) => setTimeout(r, 300));
  const extraClosedAt = extra.closedAt;
  extra.socket.destroy();
  expect(extraClosedAt).toBeDefined();
  // An open connection still gets its answer.
  held[0]!.socket.write('GET /_health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  const answer = await new Promise<string>((resolve) => {
    let text = '';
    held[0]!.socket.on('data', (d) => {
      text += String(d);
    });
    held[0]!.socket.on('close', () => resolve(text));
  });
  expect(answer).toMatch(/^HTTP\/1\.1 200 /);
}
