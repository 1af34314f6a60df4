import net from 'node:net';
import v8 from 'node:v8';
import vm from 'node:vm';

export type OpenLoopResult = {
  rate: number;
  sent: number;
  /** requests due after the warm-up (the offered load) */
  offered: number;
  ok: number;
  /** answered after the warm-up with another status than 200 (0: the connection closed) */
  failed: number;
  rps: number;
  p50: number;
  p99: number;
  max: number;
};

const EMPTY = Buffer.alloc(0);

function collectGarbage() {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
}

type Req = { method: string; path: string; headers: Record<string, string>; body?: string };

/**
 * One keep-alive connection carrying one request at a time; responses parsed just enough. Reads
 * land in one buffer per connection (`onread`): a generator that allocates a Buffer per chunk
 * collects garbage every second under load, and its pauses show up as the server's tail latency.
 */
class Connection {
  private buffered: Buffer = EMPTY;
  private due = 0;
  onDone: (due: number, status: number) => void = () => {};
  readonly socket: net.Socket;
  busy = false;
  error = '';

  constructor(host: string, port: number) {
    const buffer = Buffer.allocUnsafe(256 * 1024);
    this.socket = net.connect({
      host,
      port,
      noDelay: true,
      onread: {
        buffer,
        callback: (n: number) => {
          this.read(buffer.subarray(0, n));
          return true;
        },
      },
    });
    this.socket.on('error', (e) => {
      this.error = e.message;
    });
    this.socket.on('close', () => {
      // A request the server never answered is a failure, not a hang of the bench.
      if (this.busy) {
        this.busy = false;
        this.onDone(this.due, 0);
      }
    });
  }

  /** what a stuck connection holds, for the bench's error message */
  describe() {
    return `${this.socket.destroyed ? 'closed' : 'open'} ${this.error} ${this.buffered.length} bytes: ${this.buffered.toString('latin1', 0, 200)}`;
  }

  send(request: Buffer, due: number) {
    this.busy = true;
    this.due = due;
    this.socket.write(request);
  }

  /** an incomplete answer waits for the next read: copied out of the read buffer it lives in */
  private keep(chunk: Buffer) {
    if (this.buffered === chunk) this.buffered = Buffer.from(chunk);
  }

  /** `chunk` is the connection's read buffer: kept past this call only as a copy */
  private read(chunk: Buffer) {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    const headEnd = this.buffered.indexOf('\r\n\r\n');
    if (headEnd < 0) return this.keep(chunk);
    const head = this.buffered.toString('latin1', 0, headEnd);
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    let end: number;
    if (length) end = headEnd + 4 + Number(length[1]);
    else {
      // chunked: the answer ends with the zero-length chunk
      const last = this.buffered.indexOf('\r\n0\r\n\r\n', headEnd);
      if (last < 0) return this.keep(chunk);
      end = last + 7;
    }
    if (this.buffered.length < end) return this.keep(chunk);
    if (process.env.BENCH_DEBUG && !head.startsWith('HTTP/1.1 200'))
      process.stderr.write(`${this.buffered.toString('latin1', 0, end)}\n`);
    // One request at a time: nothing follows an answer but, at most, the rest of a partial read.
    this.buffered = end === this.buffered.length ? EMPTY : Buffer.from(this.buffered.subarray(end));
    this.busy = false;
    this.onDone(this.due, Number(head.slice(9, 12)));
  }
}

function serialise(r: Req, host: string): Buffer {
  const body = r.body === undefined ? undefined : Buffer.from(r.body);
  const lines = [`${r.method} ${r.path} HTTP/1.1`, `host: ${host}`];
  // autocannon writes its own content-length into a request's headers object: never repeat it
  for (const [k, v] of Object.entries(r.headers))
    if (!/^(content-length|host)$/i.test(k)) lines.push(`${k}: ${v}`);
  if (body) lines.push(`content-length: ${body.length}`);
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  return body ? Buffer.concat([head, body]) : head;
}

/**
 * Open-loop load at a fixed rate, requests evenly spaced, latency from the moment a request was
 * due, so queueing counts (no coordinated omission). autocannon's `overallRate` sends each
 * second's quota in bursts, and Node's http client costs tens of µs a request on the cores the
 * server needs; this generator writes prepared bytes on raw keep-alive sockets (one request in
 * flight per socket; a request due while every socket is busy waits, and that wait counts).
 */
export async function openLoop(
  base: string,
  make: (i: number) => Req,
  rate: number,
  seconds: number,
  sockets = 50,
  /** requests due in the first second warm the connections and are not counted */
  warmupMs = 1_000,
  /**
   * stopOffering: stop at the end of the window even if requests are still due (a server slower
   * than the rate would otherwise be offered the whole backlog); what was never sent counts as
   * offered and not acknowledged
   */
  options: { stopOffering?: boolean } = {},
): Promise<OpenLoopResult> {
  const url = new URL(base);
  const total = Math.round(rate * (seconds + warmupMs / 1000));
  // Prepared before the clock starts: building bodies is the generator's work, not the server's.
  // A `make` returning the same object for several i (a pool of bodies) is serialised once.
  const serialised = new WeakMap<Req, Buffer>();
  const requests = Array.from({ length: total }, (_, i) => {
    const r = make(i);
    const known = serialised.get(r);
    if (known) return known;
    const bytes = serialise(r, url.host);
    serialised.set(r, bytes);
    return bytes;
  });
  const connections = Array.from(
    { length: sockets },
    () => new Connection(url.hostname, Number(url.port)),
  );
  await Promise.all(connections.map((c) => new Promise((r) => c.socket.once('connect', r))));
  // The garbage of preparing the requests is collected now, not as a pause mid-phase.
  collectGarbage();
  const latencies = new Float64Array(total);
  let measured = 0;
  let ok = 0;
  let failed = 0;
  let answered = 0;
  let offering = true;
  let sent = 0;
  const idle: Connection[] = [...connections];
  /** BENCH_TRACE=1 prints when the slowest requests were due: periodic stalls show as a pattern */
  const trace: [number, number][] | undefined = process.env.BENCH_TRACE ? [] : undefined;
  let start = 0;
  let finished: () => void = () => {};
  const allAnswered = new Promise<void>((r) => {
    finished = r;
  });
  const dueAt = (i: number) => start + (i * 1000) / rate;
  const dispatch = () => {
    const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate));
    while (sent < due && idle.length > 0) {
      const i = sent++;
      idle.pop()!.send(requests[i]!, dueAt(i));
    }
  };
  for (const c of connections) {
    c.onDone = (due, status) => {
      lastAnswer = performance.now();
      const latency = lastAnswer - due;
      if (due >= start + warmupMs) {
        latencies[measured++] = latency;
        if (status === 200) ok++;
        else failed++;
        trace?.push([due - start, latency]);
      }
      if (!c.socket.destroyed) idle.push(c);
      if (++answered === total || (!offering && answered === sent)) finished();
      else if (offering) dispatch();
    };
  }
  start = performance.now();
  let lastAnswer = start;
  await new Promise<void>((done) => {
    const tick = () => {
      const ended = options.stopOffering && performance.now() - start >= warmupMs + seconds * 1000;
      if (!ended) dispatch();
      if (ended || sent >= total || performance.now() - lastAnswer > 10_000) return done();
      setTimeout(tick, 1);
    };
    tick();
  });
  offering = false;
  if (answered === sent) finished();
  const stuck = await Promise.race([
    allAnswered.then(() => false),
    new Promise<boolean>((r) =>
      setTimeout(() => r(true), sent >= total || options.stopOffering ? 30_000 : 0).unref(),
    ),
  ]);
  if (stuck)
    throw new Error(
      `open loop: ${total - answered} of ${total} requests unanswered (${sent} sent); ${connections
        .filter((c) => c.busy || c.socket.destroyed)
        .map((c) => c.describe())
        .join(' | ')}`,
    );
  const elapsed = (performance.now() - start - warmupMs) / 1000;
  for (const c of connections) c.socket.destroy();
  const sorted = latencies.subarray(0, measured).sort();
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
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    rate,
    sent,
    offered: total - Math.min(total, Math.round((rate * warmupMs) / 1000)),
    ok,
    failed,
    rps: ok / elapsed,
    p50: round(at(0.5)),
    p99: round(at(0.99)),
    max: round(at(1)),
  };
}
