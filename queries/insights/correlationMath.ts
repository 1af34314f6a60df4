/**
 * PostHog's correlation odds ratio with a prior of 1 on each count:
 * ((s + 1) / (S − s + 1)) / ((f + 1) / (F − f + 1)); above 1 the event goes with success.
 */
export function odds(success: number, failure: number, successTotal: number, failureTotal: number) {
  const ratio =
    (success + 1) / (successTotal - success + 1) / ((failure + 1) / (failureTotal - failure + 1));
  return {
    success_count: success,
    failure_count: failure,
    odds_ratio: ratio,
    correlation_type: ratio > 1 ? ('success' as const) : ('failure' as const),
  };
}

const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/**
 * Person property values (`key::value`) of the funnel's persons with their odds, counted a
 * batch of persons at a time (`add`), so no caller holds every person's properties at once.
 */
export function propertyCorrelations(keys: readonly string[]) {
  const counts = new Map<
    string,
    { key: string; value: string; success: number; failure: number }
  >();
  return {
    /** one person: the requested keys of its properties, and whether it converted */
    add(properties: Record<string, unknown>, converted: boolean) {
      for (const key of keys) {
        if (!Object.hasOwn(properties, key) || properties[key] === null) continue;
        const value = text(properties[key]);
        const name = `${key}::${value}`;
        const c = counts.get(name) ?? { key, value, success: 0, failure: 0 };
        if (converted) c.success++;
        else c.failure++;
        counts.set(name, c);
      }
    },
    result(successTotal: number, failureTotal: number) {
      return oddsResult(
        [...counts].map(([name, c]) => ({
          name,
          properties: { [c.key]: c.value },
          ...odds(c.success, c.failure, successTotal, failureTotal),
        })),
        successTotal,
        failureTotal,
      );
    },
  };
}

/** Every `{key, value}` of the list holds on the person (exact, as text). */
export function propertyMatches(
  properties: Record<string, unknown>,
  wanted: readonly unknown[],
): boolean {
  return wanted.every((w) => {
    const { key, value } = (w ?? {}) as { key?: unknown; value?: unknown };
    if (typeof key !== 'string' || !Object.hasOwn(properties, key)) return false;
    const values = Array.isArray(value) ? value : [value];
    return values.some((v) => text(v) === text(properties[key]));
  });
}

/** The correlations, strongest first (|ln odds|), at most 100, and whether the funnel is skewed. */
export function oddsResult(
  events: {
    name: string;
    properties: Record<string, unknown>;
    success_count: number;
    failure_count: number;
    odds_ratio: number;
    correlation_type: 'success' | 'failure';
  }[],
  successTotal: number,
  failureTotal: number,
) {
  return {
    events: events
      .sort(
        (a, b) =>
          Math.abs(Math.log(b.odds_ratio)) - Math.abs(Math.log(a.odds_ratio)) ||
          a.name.localeCompare(b.name),
      )
      .slice(0, 100)
      .map(({ name, properties, ...rest }) => ({
        event: { event: name, properties, elements: [] },
        ...rest,
      })),
    skewed: isSkewed(successTotal, failureTotal),
  };
}

const isSkewed = (s: number, f: number) => s + f > 0 && (s / (s + f) > 0.9 || s / (s + f) < 0.1);
