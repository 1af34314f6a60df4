import autocannon from 'autocannon';

const TOKEN = 'phc_bench_project_key';
const jsEvent = (i: number) => ({
  event: i % 4 === 0 ? '$pageview' : '$autocapture',
  properties: {
    distinct_id: `0192f0c4-7b1e-7d3a-9c4e-${String(100000000000 + (i % 5000))}`,
    $os: 'Mac OS X',
    $os_version: '14.5.0',
    $browser: 'Chrome',
    $browser_version: 126,
    $device_type: 'Desktop',
    $current_url: `https://shop.example.com/products/item-${i % 200}?ref=newsletter`,
    $host: 'shop.example.com',
    $pathname: `/products/item-${i % 200}`,
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
    $device_id: '0192f0c4-7b1e-7d3a-9c4e-4f1a2b3c4d5e',
    $session_id: '0192f0c4-7b1f-7000-8000-000000000001',
    $window_id: '0192f0c4-7b1f-7000-8000-000000000002',
    $pageview_id: '0192f0c4-7b1f-7000-8000-000000000003',
    $referrer: 'https://www.google.com/',
    $referring_domain: 'www.google.com',
    utm_source: 'newsletter',
    utm_medium: 'email',
    utm_campaign: 'autumn-sale',
    $set: { $browser: 'Chrome', $os: 'Mac OS X' },
    $set_once: { $initial_referrer: 'https://www.google.com/' },
    token: TOKEN,
  },
  timestamp: new Date().toISOString(),
});
const body = JSON.stringify({
  api_key: TOKEN,
  batch: Array.from({ length: 100 }, (_, i) => jsEvent(i)),
});
const r = await autocannon({
  url: `http://127.0.0.1:${process.argv[2]}/batch/`,
  method: 'POST',
  connections: 10,
  duration: Number(process.argv[3] ?? 15),
  body,
  headers: { 'content-type': 'application/json', 'x-forwarded-for': '81.2.69.160' },
});
console.log(
  'req/s',
  r.requests.average,
  'events/s',
  r.requests.average * 100,
  'non2xx',
  r.non2xx,
  'p99',
  r.latency.p99,
);
