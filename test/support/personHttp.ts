import { expect } from 'vitest';
import { capture as captureBatch } from './capture.ts';
import type { TestService } from './testService.ts';

/** Helpers of the persons command suites (test/http/persons.commands*.test.ts): real capture, then REST. */
let seq = 0;
export const uniqueId = (prefix: string) =>
  `${prefix}-${process.pid}-${Date.now().toString(36)}-${++seq}`;

type Ev = { event: string; distinct_id: string; properties?: Record<string, unknown> };

/** One /batch/ request: events of one request are ordered per distinct id only, so ordered steps are separate calls. */
export async function capture(t: TestService, ...events: Ev[]): Promise<void> {
  const batch = events.map((e) => ({
    event: e.event,
    properties: { distinct_id: e.distinct_id, $lib: 'web', ...e.properties },
  }));
  await captureBatch(t, batch);
}

export const personsPath = (t: TestService, rest = '') =>
  `/api/projects/${t.projectId}/persons/${rest}`;

export async function personByDistinctId(t: TestService, distinctId: string): Promise<any> {
  const res = await t.api('GET', personsPath(t, `?distinct_id=${encodeURIComponent(distinctId)}`));
  expect(res.status, res.text).toBe(200);
  expect(res.body.count).toBeLessThanOrEqual(1);
  return res.body.results[0] ?? null;
}

export type Captured = { anon: string; user: string; device: string; email: string; person: any };

/**
 * A person with three distinct ids, attached in this order: an anonymous id (first pageview), the
 * user id ($identify with $set), a second device's anonymous id (merged by a second $identify).
 */
export async function identifiedPerson(t: TestService, tag = 'p'): Promise<Captured> {
  const anon = uniqueId(`${tag}-anon`);
  const user = uniqueId(`${tag}-user`);
  const device = uniqueId(`${tag}-device`);
  const email = `${user}@example.com`;
  await capture(t, {
    event: '$pageview',
    distinct_id: anon,
    properties: { $current_url: 'https://example.com/' },
  });
  await capture(t, {
    event: '$identify',
    distinct_id: user,
    properties: { $anon_distinct_id: anon, $set: { email, plan: 'free' } },
  });
  await capture(t, {
    event: '$pageview',
    distinct_id: device,
    properties: { $current_url: 'https://example.com/pricing' },
  });
  await capture(t, {
    event: '$identify',
    distinct_id: user,
    properties: { $anon_distinct_id: device },
  });
  const person = await personByDistinctId(t, user);
  expect(person).not.toBeNull();
  expect([...person.distinct_ids].sort()).toEqual([anon, user, device].sort());
  expect(person.properties).toMatchObject({ email, plan: 'free' });
  return { anon, user, device, email, person };
}

export async function getPerson(
  t: TestService,
  id: number | string,
): Promise<{ status: number; body: any; text: string }> {
  return t.api('GET', personsPath(t, `${id}/`));
}

export async function eventsOf(t: TestService, distinctId: string): Promise<any[]> {
  const res = await t.api(
    'GET',
    `/api/projects/${t.projectId}/events/?distinct_id=${encodeURIComponent(distinctId)}`,
  );
  expect(res.status, res.text).toBe(200);
  return res.body.results;
}
