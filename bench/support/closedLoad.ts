import autocannon from 'autocannon';

export type LoadResult = {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  total: number;
};

/**
 * Closed-loop load with autocannon: `connections` each with one request in flight. `body` is one
 * body or a pool of them sent in turn across all connections (built beforehand: autocannon only
 * frames each one with its head).
 */
export async function closedLoad(
  url: string,
  body: string | Buffer | readonly Buffer[],
  opts: {
    seconds: number;
    connections: number;
    overallRate?: number;
    headers?: Record<string, string>;
    method?: 'POST' | 'GET';
  },
): Promise<LoadResult> {
  let next = 0;
  const pool = Array.isArray(body) ? (body as readonly Buffer[]) : undefined;
  const result = await autocannon({
    url,
    method: opts.method ?? 'POST',
    headers: { 'content-type': 'application/json', ...opts.headers },
    ...(opts.method === 'GET' ? {} : { body: pool ? pool[0] : body }),
    ...(pool
      ? {
          requests: [
            {
              setupRequest: (req: Record<string, unknown>) => {
                req.body = pool[next++ % pool.length];
                return req;
              },
            },
          ],
        }
      : {}),
    connections: opts.connections,
    duration: opts.seconds,
    ...(opts.overallRate ? { overallRate: opts.overallRate } : {}),
  });
  return loadResult(result);
}

/** The part of autocannon's result the benches print (the package ships no types). */
type AutocannonResult = {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
};

/** What a run of autocannon reports that the benches print. */
export const loadResult = (result: AutocannonResult): LoadResult => ({
  rps: result.requests.average,
  p50: result.latency.p50,
  p99: result.latency.p99,
  non2xx: result.non2xx,
  errors: result.errors,
  total: result.requests.total,
});
