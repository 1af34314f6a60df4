import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import { decideRaw } from '../support/decide.ts';
import { startTestService, type TestService } from '../support/testService.ts';

// Issue #12: Prometheus /metrics. Scraped after capture and /decide traffic, its counters moved.
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => t?.close());

/** `name{labels} value` lines of the exposition, as a map (labels as Prometheus writes them). */
async function scrape(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/metrics`, { headers });
  const text = await res.text();
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (m) values.set(m[1]!, Number(m[2]));
  }
  return { status: res.status, type: res.headers.get('content-type'), text, values };
}

describe('GET /metrics', () => {
  it('counts requests by route and status, captured events and decide calls; shows projections and the process', async () => {
    const before = await scrape(t.url);
    expect(before.status, before.text).toBe(200);
    expect(before.type).toMatch(/^text\/plain; version=0\.0\.4/);
    const batches = 'hogstream_http_requests_total{method="POST",route="/batch/",status="200"}';
    const accepted = 'hogstream_captured_events_total{outcome="accepted"}';
    const decides = 'hogstream_http_requests_total{method="POST",route="/decide/",status="200"}';

    const appends = 'hogstream_event_append_duration_seconds_count';
    const noDistinctId =
      'hogstream_dropped_events_total{reason="skipping_event_invalid_distinct_id"}';
    await capture({ url: t.url, projectApiKey: t.projectApiKey }, [
      { event: 'a', properties: { distinct_id: 'm1' } },
      { event: 'b', properties: { distinct_id: 'm1' } },
      { event: 'c', properties: { distinct_id: 'm2' } },
      { event: 'd', properties: {} },
    ]);
    for (let i = 0; i < 2; i++) {
      const r = await decideRaw(t.url, '/decide/?v=3', {
        token: t.projectApiKey,
        distinct_id: `m${i}`,
      });
      expect(r.status, r.text).toBe(200);
    }

    const after = await scrape(t.url);
    expect((after.values.get(batches) ?? 0) - (before.values.get(batches) ?? 0)).toBe(1);
    expect((after.values.get(accepted) ?? 0) - (before.values.get(accepted) ?? 0)).toBe(3);
    expect((after.values.get(decides) ?? 0) - (before.values.get(decides) ?? 0)).toBe(2);
    // the batch was (at least) one timed append; the event without a distinct id was dropped, by its reason
    expect(
      (after.values.get(appends) ?? 0) - (before.values.get(appends) ?? 0),
    ).toBeGreaterThanOrEqual(1);
    expect((after.values.get(noDistinctId) ?? 0) - (before.values.get(noDistinctId) ?? 0)).toBe(1);
    expect(
      after.values.get('hogstream_projection_pending_events{projection="persons"}'),
    ).toBeGreaterThanOrEqual(0);
    expect(
      after.values.get('hogstream_http_request_duration_seconds_count{route="/decide/"}'),
    ).toBeGreaterThanOrEqual(2);
    expect(after.values.get('hogstream_log_head_position')).toBeGreaterThan(0);
    expect(after.values.has('hogstream_projection_position{projection="persons"}')).toBe(true);
    expect(after.values.has('hogstream_projection_position{projection="clickhouse:events"}')).toBe(
      true,
    );
    expect(after.text).toMatch(/^hogstream_process_cpu_user_seconds_total \d/m);
  });

  it('shows what each read model still has to do, as status does: an idle one is not behind', async () => {
    await capture({ url: t.url, projectApiKey: t.projectApiKey }, [
      { event: 'lag', properties: { distinct_id: 'lag-1' } },
    ]);
    // quiet once every read model has applied the events of its kinds
    let status: { read_models: { name: string; pending_events: string; lag_seconds: number }[] };
    for (let i = 0; ; i++) {
      status = (await t.api('GET', '/api/projections/')).body;
      if (status.read_models.every((m) => m.pending_events === '0') || i > 100) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // the gauges read the log at most every 250 ms: a scrape just after an earlier one (the test
    // before) would show that one's figures
    await new Promise((r) => setTimeout(r, 300));
    const m = await scrape(t.url);
    // feature flags read no captured event: the head moved past them, yet they have nothing to do
    const flagsPosition = m.values.get(
      'hogstream_projection_position{projection="feature_flags"}',
    )!;
    expect(m.values.get('hogstream_log_head_position')).toBeGreaterThan(flagsPosition);
    for (const model of status.read_models) {
      expect(m.values.get(`hogstream_projection_pending_events{projection="${model.name}"}`)).toBe(
        Number(model.pending_events),
      );
      expect(m.values.get(`hogstream_projection_lag_seconds{projection="${model.name}"}`)).toBe(
        model.lag_seconds,
      );
      expect(m.values.get(`hogstream_projection_parked_events{projection="${model.name}"}`)).toBe(
        0,
      );
    }
  });

  it('with METRICS_TOKEN set, answers only a bearer of it (403 in the error shape otherwise)', async () => {
    const token = 'metrics-token-0123456789';
    const guarded = await startTestService({ METRICS_TOKEN: token });
    try {
      const refused = await fetch(`${guarded.url}/metrics`);
      expect(refused.status).toBe(403);
      expect(await refused.json()).toMatchObject({ code: 'permission_denied', attr: null });
      const ok = await scrape(guarded.url, { authorization: `Bearer ${token}` });
      expect(ok.status).toBe(200);
      expect(ok.text).toMatch(/^# TYPE hogstream_http_requests_total counter$/m);
    } finally {
      await guarded.close();
    }
  });
});
