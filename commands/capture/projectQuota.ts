/**
 * How many events a project may capture: a token bucket per project (`ratePerSecond` sustained,
 * `burst` at once). Capture keeps the events the bucket allows and drops the rest with an
 * ingestion warning, answering 200 as PostHog does for a project over its quota: a client must
 * not retry events the server decided not to keep.
 */
export type ProjectQuota = Readonly<{
  /** takes up to `count` events for the project; returns how many may be kept */
  take(projectId: number, count: number): number;
}>;

export type QuotaLimits = Readonly<{ ratePerSecond: number; burst: number }>;

export function createProjectQuota(
  limits: QuotaLimits,
  now: () => number = Date.now,
): ProjectQuota {
  if (limits.ratePerSecond <= 0) return { take: (_projectId, count) => count };
  const buckets = new Map<number, { tokens: number; at: number }>();
  return {
    take(projectId, count) {
      const t = now();
      const bucket = buckets.get(projectId) ?? { tokens: limits.burst, at: t };
      bucket.tokens = Math.min(
        limits.burst,
        bucket.tokens + ((t - bucket.at) / 1000) * limits.ratePerSecond,
      );
      bucket.at = t;
      const kept = Math.max(0, Math.min(count, Math.floor(bucket.tokens)));
      bucket.tokens -= kept;
      buckets.set(projectId, bucket);
      return kept;
    },
  };
}
