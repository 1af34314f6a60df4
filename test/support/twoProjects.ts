import { expect } from 'vitest';
import { accessDeps } from '../../commands/access/accessDeps.ts';
import { createProject } from '../../commands/access/createProject.ts';
import { adminUserId } from '../http/helpers.ts';
import { capture } from './capture.ts';
import { readModelsCaughtUp } from './readModelsCaughtUp.ts';
import type { TestService } from './testService.ts';

/**
 * Two projects of one server seeded with the same distinct ids, persons, a group and a static
 * cohort, every row marked with its project (`MARK_A` / `MARK_B` in event, person and group
 * properties), for the /query isolation suite. B has more of everything, so a count that leaks
 * B's rows differs from A's own. What A holds is read back through the REST lists (not /query),
 * so the expected counts do not come from the code under test.
 */
export type SeededProject = {
  projectId: number;
  token: string;
  mark: string;
  personUuids: string[];
  eventUuids: string[];
  cohortId: number;
  counts: {
    events: number;
    persons: number;
    distinctIds: number;
    groups: number;
    cohortPeople: number;
  };
};

const identifyGroup = (mark: string, key = 'acme') => ({
  event: '$groupidentify',
  properties: {
    distinct_id: `$company_${key}`,
    mark,
    $group_type: 'company',
    $group_key: key,
    $group_set: { mark, name: `${key} ${mark}` },
  },
});

async function seedOne(t: TestService, tag: 'A' | 'B'): Promise<SeededProject> {
  const mark = `MARK_${tag}`;
  const only = `${tag.toLowerCase()}-only`;
  const token = `phc_isolation_${tag}_${process.pid}_${Date.now().toString(36)}`;
  const { projectId } = await createProject(accessDeps(t.service.ctx), {
    name: `isolation ${tag}`,
    ownerUserId: await adminUserId(t),
    projectApiKey: token,
  });
  const send = (event: string, distinctId: string, properties: Record<string, unknown> = {}) =>
    capture(t, [{ event, properties: { distinct_id: distinctId, mark, ...properties } }], {
      apiKey: token,
    });
  // Ordered steps are separate requests: the anonymous id is merged into shared-1 by $identify.
  await send('$pageview', 'anon-shared', { $browser: tag === 'A' ? 'Chrome' : 'Firefox' });
  await send('$identify', 'shared-1', {
    $anon_distinct_id: 'anon-shared',
    $set: { mark, email: `shared-1@${mark.toLowerCase()}.example` },
  });
  await send('$pageview', 'shared-1', { $browser: 'Safari' });
  await send('$pageview', 'shared-2', { $set: { mark }, $groups: { company: 'acme' } });
  await send('only', `${only}-1`, { $set: { mark } });
  await capture(t, [identifyGroup(mark)], { apiKey: token });
  if (tag === 'B') {
    // more persons, events, groups and cohort members than A
    await send('only', `${only}-2`, { $set: { mark } });
    await send('only', `${only}-3`, { $set: { mark } });
    await send('purchase', 'shared-2', { $groups: { company: 'globex' } });
    await capture(t, [identifyGroup(mark, 'globex')], { apiKey: token });
  }
  await readModelsCaughtUp(t);
  const cohortIds = tag === 'A' ? ['shared-1', 'shared-2'] : ['shared-1', 'shared-2', `${only}-2`];
  const cohort = await staticCohort(t, projectId, `Cohort ${mark}`, cohortIds);
  await readModelsCaughtUp(t);
  return { projectId, token, mark, cohortId: cohort.id, ...(await readBack(t, projectId, cohort)) };
}

/** A static cohort from a CSV of distinct ids, uploaded as PostHog's UI does. */
async function staticCohort(t: TestService, projectId: number, name: string, ids: string[]) {
  const form = new FormData();
  form.append('name', name);
  form.append('is_static', 'true');
  form.append(
    'csv',
    new Blob([`distinct_id\n${ids.join('\n')}\n`], { type: 'text/csv' }),
    'ids.csv',
  );
  const res = await fetch(`${t.url}/api/projects/${projectId}/cohorts/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.personalApiKey}` },
    body: form,
  });
  const body = (await res.json()) as { id: number; count: number };
  expect(res.status, JSON.stringify(body)).toBe(201);
  expect(body.count).toBe(ids.length);
  return body;
}

/** What the project holds, through the REST lists. */
async function readBack(t: TestService, projectId: number, cohort: { count: number }) {
  const get = async (path: string) => {
    const res = await t.api('GET', `/api/projects/${projectId}/${path}`);
    expect(res.status, res.text).toBe(200);
    return res.body.results as any[];
  };
  const persons = await get('persons/?limit=100');
  const events = await get('events/?limit=1000');
  const groups = await get('groups/?group_type_index=0&limit=100');
  return {
    personUuids: persons.map((p) => String(p.uuid)),
    eventUuids: events.map((e) => String(e.id)),
    counts: {
      events: events.length,
      persons: persons.length,
      distinctIds: persons.reduce((n, p) => n + p.distinct_ids.length, 0),
      groups: groups.length,
      cohortPeople: cohort.count,
    },
  };
}

export async function seedTwoProjects(
  t: TestService,
): Promise<{ a: SeededProject; b: SeededProject }> {
  const a = await seedOne(t, 'A');
  const b = await seedOne(t, 'B');
  // the seed itself must differ, or a leak could go unseen in the counts
  for (const k of Object.keys(a.counts) as (keyof SeededProject['counts'])[])
    expect(b.counts[k], k).toBeGreaterThan(a.counts[k]);
  return { a, b };
}
