/**
 * The request bodies bench/capture sends. Light events (≈ 250 B, `$geoip_disable`) are one fixed
 * body; posthog-js-like events are issue #27's workload: `$pageview`s of 37 properties with a
 * `$set` of two keys, ≈ 1.2 KB each, 100 a `/batch` request, 10,000 distinct users cycling across
 * requests. Varying users come from a pool of bodies built once, before any clock starts: a
 * generator that serialised a fresh body per request would compete with the server for its cores.
 * No event carries a `uuid` (posthog-js sends one): a pool repeats its bodies, and the server
 * rightly drops an event whose uuid it already has as a client's retry.
 */
export const TOKEN = 'phc_bench_project_key';
/** GeoIP from a public address, as behind a proxy (posthog-js-like bodies only). */
export const GEO = { 'x-forwarded-for': '81.2.69.160' };
export const DISTINCT_USERS = 10_000;
export const EVENTS_PER_BATCH = 100;

const lightEvent = (i: number) => ({
  event: i % 5 === 0 ? '$pageview' : 'clicked button',
  properties: {
    distinct_id: `user-${i % 1000}`,
    $current_url: 'https://example.com/pricing',
    $browser: 'Chrome',
    $os: 'Mac OS X',
    $lib: 'web',
    $geoip_disable: true,
    plan: 'pro',
    amount: i,
  },
  timestamp: new Date().toISOString(),
});

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');

/** A `$pageview` as posthog-js 1.x sends it, of user `u` (0 … 9,999); `i` varies the page. */
export const jsEvent = (u: number, i: number) => {
  const user = `0192f0c4-7b1e-7d3a-9c4e-${hex(u, 12)}`;
  const page = i % 200;
  return {
    event: '$pageview',
    properties: {
      distinct_id: user,
      $os: 'Mac OS X',
      $os_version: '14.5.0',
      $browser: 'Chrome',
      $browser_version: 126,
      $browser_language: 'en-GB',
      $device_type: 'Desktop',
      $timezone: 'Europe/London',
      $current_url: `https://shop.example.com/products/item-${page}`,
      $host: 'shop.example.com',
      $pathname: `/products/item-${page}`,
      title: `Item ${page}`,
      $raw_user_agent:
        'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
      $screen_height: 1117,
      $screen_width: 1728,
      $viewport_height: 977,
      $viewport_width: 1728,
      $lib: 'web',
      $lib_version: '1.232.3',
      $insert_id: `ins${i.toString(36).padStart(12, '0')}`,
      $time: 1732406400.123 + i,
      $device_id: `0192f0c4-7b1e-7d3a-8000-${hex(u, 12)}`,
      $session_id: `0192f0c4-7b1f-7000-8000-${hex(u, 12)}`,
      $window_id: `0192f0c4-7b1f-7000-9000-${hex(u, 12)}`,
      $pageview_id: `0192f0c4-7b1f-7000-a000-${hex(i, 12)}`,
      $referrer: 'https://www.google.com/',
      $referring_domain: 'www.google.com',
      $is_identified: false,
      $process_person_profile: true,
      $configured_session_timeout_ms: 1800000,
      $active_feature_flags: ['new-checkout'],
      $search_engine: 'google',
      utm_source: 'newsletter',
      utm_medium: 'email',
      utm_campaign: 'autumn-sale',
      $set: { $browser: 'Chrome', $os: 'Mac OS X' },
      token: TOKEN,
    },
    timestamp: new Date().toISOString(),
  };
};

export const lightBatchBody = JSON.stringify({
  api_key: TOKEN,
  batch: Array.from({ length: EVENTS_PER_BATCH }, (_, i) => lightEvent(i)),
});
export const lightSingleBody = JSON.stringify({ api_key: TOKEN, ...lightEvent(1) });

/**
 * posthog-js-like `/batch` bodies: body k holds users k·100 … k·100 + 99, so sending the pool in
 * turn cycles through all 10,000 users once every 100 requests.
 */
export const jsBatchBodies: Buffer[] = Array.from(
  { length: DISTINCT_USERS / EVENTS_PER_BATCH },
  (_, k) =>
    Buffer.from(
      JSON.stringify({
        api_key: TOKEN,
        batch: Array.from({ length: EVENTS_PER_BATCH }, (_, j) =>
          jsEvent(k * EVENTS_PER_BATCH + j, k * EVENTS_PER_BATCH + j),
        ),
      }),
    ),
);
/** posthog-js-like single `/capture` bodies, one a user. */
export const jsSingleBodies: Buffer[] = Array.from({ length: DISTINCT_USERS }, (_, u) =>
  Buffer.from(JSON.stringify({ api_key: TOKEN, ...jsEvent(u, u) })),
);

/** What the header line says about the posthog-js-like workload (checked, not assumed). */
export function describeJsWorkload() {
  const sample = jsEvent(0, 0);
  const bytes = jsBatchBodies.reduce((n, b) => n + b.length, 0);
  const users = new Set<string>();
  for (const body of jsBatchBodies)
    for (const e of (JSON.parse(body.toString()) as { batch: ReturnType<typeof jsEvent>[] }).batch)
      users.add(e.properties.distinct_id);
  return {
    properties: Object.keys(sample.properties).length,
    setKeys: Object.keys(sample.properties.$set).length,
    bytesPerEvent: bytes / (jsBatchBodies.length * EVENTS_PER_BATCH),
    distinctUsers: users.size,
    bodies: jsBatchBodies.length,
  };
}
