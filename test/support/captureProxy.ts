import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A recording pass-through in front of the test service, for SDK suites: the SDK is pointed at the proxy, every
 * request is forwarded unchanged and answered with the service's answer, and the proxy keeps what went over the wire
 * (method, path with query, headers, body bytes, status) so that a test can check the SDK really used the transport it
 * is meant to (gzip, lz64 form, …) — and nothing else (no /flags, no /decide).
 */
export type RecordedExchange = {
  method: string;
  /** path with the query string */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  status: number;
  responseText: string;
};

export type CaptureProxy = {
  url: string;
  exchanges: RecordedExchange[];
  close: () => Promise<void>;
};

export async function startCaptureProxy(targetUrl: string): Promise<CaptureProxy> {
  const target = new URL(targetUrl);
  const exchanges: RecordedExchange[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const upstream = http.request(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: target.host },
          agent: false,
        },
        (up) => {
          const out: Buffer[] = [];
          up.on('data', (c: Buffer) => out.push(c));
          up.on('end', () => {
            const response = Buffer.concat(out);
            exchanges.push({
              method: req.method ?? '',
              url: req.url ?? '',
              headers: req.headers,
              body,
              status: up.statusCode ?? 0,
              responseText: response.toString('utf8'),
            });
            const headers = { ...up.headers };
            delete headers['transfer-encoding'];
            headers['content-length'] = String(response.length);
            res.writeHead(up.statusCode ?? 502, headers);
            res.end(response);
          });
        },
      );
      upstream.on('error', (e) => {
        res.writeHead(502);
        res.end(String(e));
      });
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
