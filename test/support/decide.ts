/** A raw request to the public flag endpoints, as a client sends it; JSON body unless `raw` bytes. */
export async function decideRaw(
  url: string,
  path: string,
  body: unknown,
  options: { headers?: Record<string, string>; raw?: Buffer | string; method?: string } = {},
): Promise<{ status: number; body: any; text: string; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${url}${path}`, {
    method: options.method ?? 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    ...(options.method === 'GET'
      ? {}
      : { body: (options.raw ?? JSON.stringify(body)) as BodyInit }),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text, ms: performance.now() - started };
}
