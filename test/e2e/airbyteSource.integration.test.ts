import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { capture } from '../support/capture.ts';
import { readModelsCaughtUp } from '../support/readModelsCaughtUp.ts';
import { startTestService, type TestService } from '../support/testService.ts';

/**
 * Issue #28, "Done when" 1: the requests Airbyte's PostHog source connector makes, replayed from
 * its manifest (test/fixtures/airbyte-source-posthog.manifest.excerpt.yaml: paths, page sizes,
 * offset paging that stops at a short page, the events stream's time slice), for every stream it
 * offers, against a project of 30,032 events; every record must be read, each once.
 * On main 5efde02 the events stream read 1,000 of 30,032 events and reported success.
 */
const EVENTS = 30_032; // the count: three full pages of 10,000 and a short one
const PEOPLE = 250; // three pages of 100 persons, the last short
const EACH = 105; // cohorts, flags, annotations, insights: two pages of 100
const BATCH = 1_000;

type Paginator = {
  page_size_option: { field_name: string };
  pagination_strategy: { type: string; page_size: number };
  page_token_option: { field_name: string };
};
type Stream = {
  name: string;
  retriever: { requester: { path: string }; paginator: Paginator };
  incremental_sync?: {
    stream_slicers: [
      unknown,
      {
        start_time_option: { field_name: string };
        end_time_option: { field_name: string };
        step: string;
      },
    ];
  };
};
const manifest = parse(
  readFileSync(
    new URL('../fixtures/airbyte-source-posthog.manifest.excerpt.yaml', import.meta.url),
    'utf8',
  ),
) as { streams: Stream[] };
const stream = (name: string) => manifest.streams.find((s) => s.name === name)!;

let t: TestService;
const NOW = Date.now();
const DAY = 86_400_000;
const eventIds: string[] = [];
const created: Record<string, number[]> = {
  cohorts: [],
  feature_flags: [],
  annotations: [],
  insights: [],
};

/** Sequential POSTs in small parallel groups: a few hundred resources without hammering two cores. */
async function createMany(path: string, count: number, body: (i: number) => unknown) {
  const ids: number[] = [];
  for (let i = 0; i < count; i += 10) {
    const group = await Promise.all(
      Array.from({ length: Math.min(10, count - i) }, (_, j) => t.api('POST', path, body(i + j))),
    );
    for (const res of group) {
      expect(res.status, res.text).toBe(201);
      ids.push(res.body.id);
    }
  }
  return ids;
}

beforeAll(async () => {
  t = await startTestService();
  // 30,032 events over the last five days, through /batch/ 1,000 at a time
  for (let i = 0; i < EVENTS; i += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, EVENTS - i) }, (_, j) => {
      const n = i + j;
      const uuid = randomUUID();
      eventIds.push(uuid);
      return {
        event: n % 3 === 0 ? 'signed_up' : '$pageview',
        distinct_id: `user-${n % PEOPLE}`,
        uuid,
        timestamp: new Date(NOW - DAY - Math.floor((n / EVENTS) * 4 * DAY)).toISOString(),
        properties: { $current_url: `https://example.com/${n % 17}`, n },
      };
    });
    await capture(t, batch);
  }
  const projects = `/api/projects/${t.projectId}`;
  created.cohorts = await createMany(`${projects}/cohorts/`, EACH, (i) => ({
    name: `cohort ${i}`,
    is_static: true,
  }));
  created.feature_flags = await createMany(`${projects}/feature_flags/`, EACH, (i) => ({
    key: `flag-${i}`,
    filters: { groups: [{ properties: [], rollout_percentage: 50 }] },
  }));
  created.annotations = await createMany(`${projects}/annotations/`, EACH, (i) => ({
    content: `release ${i}`,
    date_marker: new Date(NOW - i * 3_600_000).toISOString(),
    scope: 'project',
  }));
  created.insights = await createMany(`${projects}/insights/`, EACH, (i) => ({
    name: `insight ${i}`,
    saved: true,
    filters: { insight: 'TRENDS', events: [{ id: '$pageview' }], date_from: '-7d' },
  }));
  await readModelsCaughtUp(t, 240_000);
}, 600_000);
afterAll(async () => {
  await t?.close();
});

/** The stream's path for a partition, as the CDK renders the manifest's template. */
function pathOf(s: Stream, slice: Record<string, number>): string {
  const rendered = s.retriever.requester.path
    .replace(/\{\{ stream_slice\.(\w+) \}\}/g, (_, key: string) => String(slice[key]))
    .replace("{{ parameters['name'] }}", s.name);
  // url_base is `<base_url>/api/`; the CDK joins the path without its leading slash
  return `/api/${rendered.replace(/^\//, '')}`;
}

type Read = { records: Record<string, unknown>[]; pages: number[]; requests: string[] };

/**
 * DefaultPaginator with OffsetIncrement, as the CDK runs it: `limit` = page size on every request,
 * no offset on the first, then offset += records of the last page; stop at a page shorter than
 * the page size (or empty). `next` in the answer is never read. `firstOnly` are the slice's
 * parameters, which the connector's events retriever sends on the first page only.
 */
async function readOffsetPaged(
  s: Stream,
  path: string,
  firstOnly: Record<string, string> = {},
): Promise<Read> {
  const p = s.retriever.paginator;
  expect(p.pagination_strategy.type).toBe('OffsetIncrement');
  const size = p.pagination_strategy.page_size;
  const out: Read = { records: [], pages: [], requests: [] };
  let offset: number | undefined;
  for (;;) {
    const query = new URLSearchParams({ [p.page_size_option.field_name]: String(size) });
    if (offset === undefined) for (const [k, v] of Object.entries(firstOnly)) query.set(k, v);
    else query.set(p.page_token_option.field_name, String(offset));
    const request = `${path}?${query}`;
    out.requests.push(request);
    const res = await t.api('GET', request);
    expect(res.status, `${request}: ${res.text.slice(0, 300)}`).toBe(200);
    const records = res.body.results as Record<string, unknown>[];
    out.records.push(...records);
    out.pages.push(records.length);
    if (records.length < size || records.length === 0) return out;
    offset = (offset ?? 0) + records.length;
    expect(out.pages.length, 'runaway paging').toBeLessThan(1_000);
  }
}

/** Python's `strftime('%Y-%m-%dT%H:%M:%S.%f%z')` in UTC: the manifest's datetime_format. */
const airbyteDateTime = (ms: number) =>
  new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000+0000');

const ids = (read: Read) => read.records.map((r) => r.id);
const projectSlices = async () =>
  (await readOffsetPaged(stream('projects'), pathOf(stream('projects'), {}))).records;

describe('Airbyte PostHog source connector, replayed from its manifest', () => {
  it('projects: every project the key sees', async () => {
    const read = await readOffsetPaged(stream('projects'), pathOf(stream('projects'), {}));
    expect(read.requests[0]).toBe('/api/projects?limit=100');
    expect(ids(read)).toContain(t.projectId);
    expect(new Set(ids(read)).size).toBe(read.records.length);
  });

  it(`events: all ${EVENTS} in pages of 10,000 (limit=10000, then offset), each once`, async () => {
    const s = stream('events');
    const slicer = s.incremental_sync!.stream_slicers[1];
    // one 30-day slice from start_date to now: the connector drops after/before after the first
    // page of a slice, so with several slices it would read other slices' events again
    expect(slicer.step).toContain("config.get('events_time_step', 30)");
    const startDate = NOW - 10 * DAY;
    const records: Record<string, unknown>[] = [];
    const pages: number[][] = [];
    for (const project of await projectSlices()) {
      const read = await readOffsetPaged(s, pathOf(s, { project_id: project.id as number }), {
        [slicer.start_time_option.field_name]: airbyteDateTime(startDate),
        [slicer.end_time_option.field_name]: airbyteDateTime(Date.now()).replace(
          /\.\d{6}/,
          '.000000',
        ),
      });
      records.push(...read.records);
      pages.push(read.pages);
      if (project.id === t.projectId) {
        expect(read.requests[0]).toMatch(
          new RegExp(`^/api/projects/${t.projectId}/events/\\?limit=10000&after=.+%2B0000&before=`),
        );
        expect(read.requests[1]).toBe(
          `/api/projects/${t.projectId}/events/?limit=10000&offset=10000`,
        );
        expect(read.pages).toEqual([10_000, 10_000, 10_000, 32]);
      }
    }
    const read = records.map((r) => r.id as string);
    expect(read).toHaveLength(EVENTS);
    expect(new Set(read)).toEqual(new Set(eventIds));
  }, 300_000);

  it(`persons: all ${PEOPLE}, each once`, async () => {
    const s = stream('persons');
    const read = await readOffsetPaged(s, pathOf(s, { id: t.projectId }));
    expect(read.requests[0]).toBe(`/api/projects/${t.projectId}/persons?limit=100`);
    expect(read.pages).toEqual([100, 100, 50]);
    const distinctIds = read.records.flatMap((p) => p.distinct_ids as string[]);
    expect(new Set(distinctIds)).toEqual(
      new Set(Array.from({ length: PEOPLE }, (_, i) => `user-${i}`)),
    );
    expect(new Set(ids(read)).size).toBe(PEOPLE);
  });

  for (const name of ['cohorts', 'feature_flags', 'annotations', 'insights']) {
    it(`${name}: every one created, each once, in pages of 100`, async () => {
      const s = stream(name);
      const read = await readOffsetPaged(s, pathOf(s, { id: t.projectId }));
      expect(read.requests[0]).toBe(`/api/projects/${t.projectId}/${name}?limit=100`);
      expect(read.requests[1]).toBe(`/api/projects/${t.projectId}/${name}?limit=100&offset=100`);
      expect(new Set(ids(read)).size).toBe(read.records.length);
      expect(ids(read)).toEqual(expect.arrayContaining(created[name]!));
      expect(read.pages.slice(0, -1).every((n) => n === 100)).toBe(true);
    });
  }
});
