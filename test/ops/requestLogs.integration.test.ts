import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import {
  type ServerProcess,
  startServerProcess,
  stopServerProcess,
} from '../support/serverProcess.ts';

// Issue #12: at the default level (info) every API request is one JSON line, without its query
// string (it may hold a token); capture and /decide requests are one summary line per interval.
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-request-logs-'));
let server: ServerProcess | undefined;
afterAll(async () => {
  if (server) await stopServerProcess(server);
  fs.rmSync(tmp, { recursive: true, force: true });
});

const lines = (out: string) =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('request logs at the default level', () => {
  it('one line per API request, a summary for capture and /decide', {
    timeout: 90_000,
  }, async () => {
    server = await startServerProcess({
      DATA_DIR: tmp,
      LOG_LEVEL: '',
      LOG_SUMMARY_SECONDS: '1',
      INIT_PROJECT_API_KEY: 'phc_request_logs',
      INIT_PERSONAL_API_KEY: 'phx_request_logs',
    });
    const res = await fetch(`${server.url}/api/projects/?token=phc_secret_in_query`, {
      headers: { authorization: 'Bearer phx_request_logs', 'x-request-id': 'req-logs-1' },
    });
    expect(res.status).toBe(200);
    for (let i = 0; i < 3; i++)
      await capture({ url: server.url, projectApiKey: 'phc_request_logs' }, [
        { event: 'e', properties: { distinct_id: `u${i}` } },
      ]);
    const decide = await fetch(`${server.url}/decide/?v=3`, {
      method: 'POST',
      body: JSON.stringify({ token: 'phc_request_logs', distinct_id: 'u1' }),
    });
    expect(decide.status).toBe(200);

    // One summary line per interval: the requests may fall into two of them, so they are summed.
    const counted = () => {
      const summaries = lines(server!.output()).filter((l) => l.msg === 'public requests');
      let captured = 0;
      let decided = 0;
      for (const s of summaries)
        for (const [k, v] of Object.entries(s.requests as Record<string, { count: number }>)) {
          if (k === 'POST /decide/ 200') decided += v.count;
          else if (/ 200$/.test(k)) captured += v.count;
        }
      return { summaries, captured, decided };
    };
    for (let i = 0; i < 50; i++) {
      const { captured, decided } = counted();
      if (captured + decided >= 4) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const all = lines(server.output());
    const apiLine = all.find((l) => l.msg === 'request' && l.reqId === 'req-logs-1');
    expect(apiLine).toMatchObject({
      level: 30,
      method: 'GET',
      route: '/api/projects/',
      path: '/api/projects/',
      status: 200,
    });
    expect(server.output()).not.toContain('phc_secret_in_query');
    // capture and /decide: no line of their own, counted in the summary
    expect(all.filter((l) => l.msg === 'request' && String(l.path).startsWith('/e'))).toEqual([]);
    const { summaries, captured, decided } = counted();
    expect(summaries.length, server.output()).toBeGreaterThan(0);
    for (const summary of summaries) expect(summary).toMatchObject({ level: 30 });
    expect(captured).toBe(3);
    expect(decided).toBe(1);
  });
});
