import http from 'node:http';

export type OpenLoopResult = {
  rate: number;
  sent: number;
  ok: number;
  rps: number;
  p50: number;
  p99: number;
  max: number;
};

type Req = { method: string; path: string; headers: Record<string, string>; body?: string };

/**
 * Open-loop load at a fixed rate, requests evenly spaced (a few each millisecond), latency from the
 * moment a request was due, so queueing counts (no coordinated omission). autocannon's
 * `overallRate` sends each second's quota in bursts, which inflates the tail even for a hello
 * world; this is the measure of "p99 at half the peak rate".
 */
export async function openLoop(
  base: string,
  make: (i: number) => Req,
  rate: number,
  seconds: number,
  sockets = 50,
  /** requests due in the first second open the connections and are not counted */
  warmupMs = 1_000,
): Promise<OpenLoopResult> {
  const url = new URL(base);
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  const latencies: number[] = [];
  let sent = 0;
  let ok = 0;
  const inFlight = new Set<Promise<void>>();
  const send = (i: number, due: number) => {
    const r = make(i);
    const p = new Promise<void>((resolve) => {
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          method: r.method,
          path: r.path,
          headers: r.body
            ? { ...r.headers, 'content-length': Buffer.byteLength(r.body) }
            : r.headers,
          agent,
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            if (due < start + warmupMs) return void resolve();
            latencies.push(performance.now() - due);
            if (trace) trace.push([due - start, performance.now() - due]);
            if (res.statusCode === 200) ok++;
            resolve();
          });
        },
      );
      req.on('error', () => resolve());
      req.end(r.body);
    });
    inFlight.add(p);
    void p.then(() => inFlight.delete(p));
  };
  const start = performance.now();
  /** BENCH_TRACE=1 prints when the slowest requests were due: periodic stalls show as a pattern */
  const trace: [number, number][] | undefined = process.env.BENCH_TRACE ? [] : undefined;
  const total = Math.round(rate * (seconds + warmupMs / 1000));
  await new Promise<void>((done) => {
    const tick = () => {
      const elapsed = performance.now() - start;
      const due = Math.min(total, Math.floor((elapsed / 1000) * rate));
      while (sent < due) send(sent, start + (sent++ * 1000) / rate);
      if (sent >= total) return done();
      setTimeout(tick, 1);
    };
    tick();
  });
  await Promise.all(inFlight);
  const elapsed = (performance.now() - start - warmupMs) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  if (trace) {
    // 100 ms windows holding a request slower than 5 ms: when, how slow, how many
    const windows = new Map<number, { max: number; n: number }>();
    for (const [due, latency] of trace) {
      if (latency <= 5) continue;
      const w = windows.get(Math.floor(due / 100)) ?? { max: 0, n: 0 };
      w.max = Math.max(w.max, latency);
      w.n++;
      windows.set(Math.floor(due / 100), w);
    }
    const shown = [...windows].sort((a, b) => a[0] - b[0]);
    process.stderr.write(
      `stalls (window s: max ms ×count>5ms): ${shown.map(([w, v]) => `${(w / 10).toFixed(1)}: ${v.max.toFixed(0)}×${v.n}`).join(', ')}\n`,
    );
  }
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    rate,
    sent,
    ok,
    rps: ok / elapsed,
    p50: round(at(0.5)),
    p99: round(at(0.99)),
    max: round(at(1)),
  };
}
