/** One call in flight at a time, its answer reused for `ms`: probes and scrapes cannot load the databases. */
export function cachedFor<T>(ms: number, check: () => Promise<T>): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    if (!last || Date.now() - last.at > ms) last = { at: Date.now(), value: check() };
    return last.value;
  };
}
