import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessDeps } from '../../commands/access/accessDeps.ts';
import { createProject } from '../../commands/access/createProject.ts';
import { capture } from '../support/capture.ts';
import { decideRaw } from '../support/decide.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { adminUserId, flagsPath } from './helpers.ts';

// Every case of flag_cases.json through POST /decide (issue #9): the case's flags are created
// through the REST API, its properties sent in the request.
const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));
type Flag = { key: string; name?: string; active: boolean; filters: unknown };
type Case = {
  name: string;
  flag: Flag;
  extra_flags?: Flag[];
  distinct_id: string;
  person_properties?: Record<string, unknown>;
  groups?: Record<string, string>;
  group_properties?: Record<string, Record<string, unknown>>;
  group_type_mapping?: Record<string, string>;
  cohorts?: unknown;
  now?: string;
  expected_here: string | boolean;
};
const all = JSON.parse(readFileSync(join(FIXTURES, 'flag_cases.json'), 'utf8')) as Case[];
const cases = all.map((c, i) => ({ ...c, label: `#${i} ${c.name}` }));
// Relative-date cases (`now`) run with the service's clock set to the case's instant.
let clock: Date | undefined;

type Project = {
  id: number;
  token: string;
  flags: Map<string, string>;
  mapping: string;
  /** the case's cohorts by the ids its flags use; created through the REST API, ids remapped */
  cohorts?: Record<string, unknown>;
};
let t: TestService;
let placed = new Map<string, Project>();

/** Cases share a project when their flags agree key by key (the key is part of the hash). */
function placeAll(list: typeof cases): Project[] {
  const projects: Project[] = [];
  for (const c of list) {
    const flags = [c.flag, ...(c.extra_flags ?? [])];
    const mapping = JSON.stringify(c.group_type_mapping ?? {});
    const fits = (p: Project) =>
      p.mapping === mapping &&
      flags.every((f) => {
        const have = p.flags.get(f.key);
        return have === undefined || have === JSON.stringify(f);
      });
    // A case with cohorts gets a project of its own: its cohort ids are remapped there.
    let p = c.cohorts ? undefined : projects.find((q) => !q.cohorts && fits(q));
    if (!p) {
      p = { id: 0, token: '', flags: new Map(), mapping };
      if (c.cohorts) p.cohorts = c.cohorts as Record<string, unknown>;
      projects.push(p);
    }
    for (const f of flags) p.flags.set(f.key, JSON.stringify(f));
    placed.set(c.label, p);
  }
  return projects;
}

async function inParallel<T>(items: readonly T[], n: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/** `{type: "cohort", value: <case id>}` anywhere in `value` → the id the server gave that cohort. */
function remapCohorts(value: unknown, ids: Map<string, number>): unknown {
  if (Array.isArray(value)) return value.map((v) => remapCohorts(v, ids));
  if (value === null || typeof value !== 'object') return value;
  const o = value as Record<string, unknown>;
  const out = Object.fromEntries(Object.entries(o).map(([k, v]) => [k, remapCohorts(v, ids)]));
  if (o.type === 'cohort' && ids.has(String(o.value))) out.value = ids.get(String(o.value));
  return out;
}

const cohortRefs = (value: unknown): string[] =>
  Array.isArray(value)
    ? value.flatMap(cohortRefs)
    : value !== null && typeof value === 'object'
      ? [
          ...((value as { type?: unknown }).type === 'cohort'
            ? [String((value as { value: unknown }).value)]
            : []),
          ...Object.values(value).flatMap(cohortRefs),
        ]
      : [];

/** Creates the case's cohorts, referenced ones first; returns case id → server id. */
async function createCohorts(p: Project): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  const pending = new Map(Object.entries(p.cohorts ?? {}));
  while (pending.size > 0) {
    const ready = [...pending].find(([, group]) =>
      cohortRefs(group).every((ref) => ids.has(ref) || !pending.has(ref)),
    );
    if (!ready) throw new Error('the case has a cycle of cohort references');
    const [caseId, group] = ready;
    const res = await t.api('POST', `/api/projects/${p.id}/cohorts/`, {
      name: `case cohort ${caseId}`,
      filters: { properties: remapCohorts(group, ids) },
    });
    expect(res.status, res.text).toBe(201);
    ids.set(caseId, res.body.id);
    pending.delete(caseId);
  }
  return ids;
}

// Every case runs twice: evaluated on the main thread and on an evaluation thread (FLAG_EVALUATION_THREADS).
describe.each([
  ['0', 'main thread'],
  ['1', 'evaluation thread'],
])('FLAG_EVALUATION_THREADS=%s (%s)', (threads, where) => {
  beforeAll(async () => {
    placed = new Map();
    t = await startTestService(
      { FLAG_EVALUATION_THREADS: threads },
      { now: () => clock ?? new Date() },
    );
    const owner = await adminUserId(t);
    const projects = placeAll(cases);
    await inParallel(projects, 6, async (p) => {
      const made = await createProject(accessDeps(t.service.ctx), {
        name: `cases-${Math.random()}`,
        ownerUserId: owner,
      });
      p.id = made.projectId;
      p.token = made.projectApiKey;
      // Group types get their indexes in the order capture first sees them.
      const mapping = JSON.parse(p.mapping) as Record<string, string>;
      for (const index of Object.keys(mapping).sort((a, b) => Number(a) - Number(b))) {
        await capture({ url: t.url, projectApiKey: p.token }, [
          {
            event: '$groupidentify',
            distinct_id: 'setup',
            properties: { $group_type: mapping[index], $group_key: 'setup', $group_set: {} },
          },
        ]);
      }
      const ids = await createCohorts(p);
      for (const json of p.flags.values()) {
        const f = remapCohorts(JSON.parse(json), ids) as Flag;
        const res = await t.api('POST', flagsPath(p.id), {
          key: f.key,
          name: f.name ?? f.key,
          active: f.active,
          filters: f.filters,
        });
        expect(res.status, `${f.key}: ${res.text}`).toBe(201);
      }
    });
    // Group types are assigned by the persons projection, read by the cache within a second.
    await new Promise((r) => setTimeout(r, 1_200));
  }, 300_000);
  afterAll(async () => {
    // Where the answers came from: all on the main thread without threads; with one, all on the
    // thread — about half of the cases after the main thread loaded the stored data their
    // flags need (the thread asks for it after its first pass).
    const counts = t.service.flagEvaluationThreads?.counts();
    if (threads === '0') expect(counts).toBeUndefined();
    else {
      expect(counts!.onMainThread).toBe(0);
      expect(counts!.withStoredData).toBeGreaterThan(cases.length / 3);
      expect(counts!.onThreads).toBeGreaterThanOrEqual(cases.length);
    }
    await t?.close();
  });

  const bodyOf = (c: (typeof cases)[number], token: string) => ({
    token,
    distinct_id: c.distinct_id,
    ...(c.groups ? { groups: c.groups } : {}),
    ...(c.person_properties ? { person_properties: c.person_properties } : {}),
    ...(c.group_properties ? { group_properties: c.group_properties } : {}),
  });

  describe(`flag_cases.json through POST /decide?v=3 (${where})`, () => {
    it('runs every case, those with a clock included', () => {
      expect(cases.length).toBe(all.length);
      expect(cases.filter((c) => c.now).length).toBeGreaterThan(0);
    });

    it.each(cases)('$label', async (c) => {
      const p = placed.get(c.label)!;
      clock = c.now ? new Date(c.now) : undefined;
      const res = await decideRaw(t.url, '/decide/?v=3', bodyOf(c, p.token)).finally(() => {
        clock = undefined;
      });
      expect(res.status).toBe(200);
      expect(res.body.featureFlags[c.flag.key], JSON.stringify(res.body)).toEqual(c.expected_here);
    });
  });

  describe(`a sample through v4 and /flags (${where})`, () => {
    const sample = cases.filter((c, i) => !c.cohorts && i % 7 === 0);
    it.each(sample)('$label', async (c) => {
      const p = placed.get(c.label)!;
      for (const path of ['/decide/?v=4', '/flags/?v=2']) {
        clock = c.now ? new Date(c.now) : undefined;
        const res = await decideRaw(t.url, path, bodyOf(c, p.token)).finally(() => {
          clock = undefined;
        });
        expect(res.status).toBe(200);
        const flag = res.body.flags[c.flag.key];
        expect(flag.key).toBe(c.flag.key);
        expect(flag.enabled).toBe(c.expected_here !== false);
        expect(flag.variant).toBe(typeof c.expected_here === 'string' ? c.expected_here : null);
        expect(typeof flag.reason.code).toBe('string');
        expect(Number.isInteger(flag.metadata.id)).toBe(true);
        expect(typeof res.body.requestId).toBe('string');
      }
    });
  });
});
