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
            latencies.push(performance.now() - due);
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
  const total = Math.round(rate * seconds);
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
  const elapsed = (performance.now() - start) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
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
