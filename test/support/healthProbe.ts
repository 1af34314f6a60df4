/**
 * Pings /_health every 50 ms while a test runs; the function it returns stops it and resolves
 * with the longest time an answer took (the fuzz suites' "no stall over 1 s").
 */
export function probeHealth(url: string): () => Promise<number> {
  let stop = false;
  let longest = 0;
  const loop = (async () => {
    while (!stop) {
      const started = performance.now();
      await fetch(`${url}/_health`)
        .then((r) => r.arrayBuffer())
        .catch(() => undefined);
      longest = Math.max(longest, performance.now() - started);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return async () => {
    stop = true;
    await loop;
    return longest;
  };
}
