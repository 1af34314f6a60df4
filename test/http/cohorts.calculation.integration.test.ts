import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';

// Dynamic cohort membership (issue #10): recalculated after a create or a change of filters and
// recorded in the log; behavioural filters ("did X at least N times in the last D days") counted
// in ClickHouse over persons after merges. Clock: 2024-08-10 12:00 UTC.
const NOW = new Date('2024-08-10T12:00:00Z');
let t: TestService;
const cohorts = () => `/api/projects/${t.projectId}/cohorts/`;

/**
 * The cohort once a calculation has ended (and `until` holds: the clock is fixed, so a second
 * calculation has the same `last_calculation`); bounded wait.
 */
async function calculated(
  id: number,
  until: (c: { count: number | null }) => boolean = () => true,
) {
  let c:
    | { is_calculating: boolean; last_calculation: string | null; count: number | null }
    | undefined;
  for (let i = 0; i < 200; i++) {
    c = (await t.api('GET', `${cohorts()}${id}/`)).body;
    if (c && !c.is_calculating && c.last_calculation && until(c)) return c;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`cohort ${id} was not calculated: ${JSON.stringify(c)}`);
}

beforeAll(async () => {
  t = await startTestService({}, { now: () => NOW });
  const target = { url: t.url, projectApiKey: t.projectApiKey };
  const ev = (event: string, distinctId: string, timestamp: string, properties = {}) => ({
    event,
    distinct_id: distinctId,
    timestamp,
    properties,
  });
  await capture(target, [
    ev('$set', 'b1', '2024-08-01T00:00:00Z', { $set: { plan: 'pro' } }),
    ev('$set', 'b2', '2024-08-01T00:00:00Z', { $set: { plan: 'pro' } }),
    ev('$set', 'b3', '2024-08-01T00:00:00Z', { $set: { plan: 'free' } }),
    // b1 bought 3 times this week; b2 twice, one of them 8 days ago; b3 three times.
    ev('purchased', 'b1', '2024-08-05T10:00:00Z'),
    ev('purchased', 'b1', '2024-08-06T10:00:00Z'),
    ev('purchased', 'b1', '2024-08-09T10:00:00Z'),
    ev('purchased', 'b2', '2024-08-02T10:00:00Z'),
    ev('purchased', 'b2', '2024-08-08T10:00:00Z'),
    ev('purchased', 'b3', '2024-08-07T10:00:00Z'),
    ev('purchased', 'b3', '2024-08-08T10:00:00Z'),
    // an anonymous id later merged into b3: its purchase counts for b3
    ev('purchased', 'anon-b3', '2024-08-09T09:00:00Z'),
  ]);
  await capture(target, [
    ev('$identify', 'b3', '2024-08-09T09:30:00Z', { $anon_distinct_id: 'anon-b3' }),
  ]);
}, 60_000);
afterAll(async () => t?.close());

describe('dynamic cohort membership', () => {
  it('counts a property cohort after it is created, and again after its filters change', async () => {
    const created = await t.api('POST', cohorts(), {
      name: 'Pro',
      filters: {
        properties: { type: 'AND', values: [{ key: 'plan', type: 'person', value: 'pro' }] },
      },
    });
    expect(created.status, created.text).toBe(201);
    const first = await calculated(created.body.id);
    expect(first).toMatchObject({ count: 2, is_calculating: false, errors_calculating: 0 });
    const patched = await t.api('PATCH', `${cohorts()}${created.body.id}/`, {
      filters: {
        properties: { type: 'AND', values: [{ key: 'plan', type: 'person', value: 'free' }] },
      },
    });
    expect(patched.status, patched.text).toBe(200);
    const second = await calculated(created.body.id, (c) => c.count !== 2);
    expect(second.count).toBe(1);
    expect(second.last_calculation).toBe(NOW.toISOString());
  });

  it('counts behavioural cohorts in ClickHouse, persons after merges', async () => {
    const behavioural = (extra: Record<string, unknown>) => ({
      type: 'behavioral',
      value: 'performed_event',
      key: 'purchased',
      event_type: 'events',
      time_value: 7,
      time_interval: 'day',
      ...extra,
    });
    const make = async (values: unknown[]) => {
      const res = await t.api('POST', cohorts(), {
        name: 'Buyers',
        filters: { properties: { type: 'AND', values } },
      });
      expect(res.status, res.text).toBe(201);
      return calculated(res.body.id);
    };
    // in the last 7 days (since Aug 3 12:00): b1 3, b2 1, b3 3 (2 + 1 as anon-b3)
    expect((await make([behavioural({ operator: 'gte', operator_value: 3 })])).count).toBe(2);
    expect((await make([behavioural({ operator: 'gte', operator_value: 1 })])).count).toBe(3);
    expect(
      (
        await make([
          behavioural({ operator: 'gte', operator_value: 3 }),
          { key: 'plan', type: 'person', value: 'pro' },
        ])
      ).count,
    ).toBe(1);
    expect(
      (await make([behavioural({ operator: 'gte', operator_value: 3, negation: true })])).count,
    ).toBe(1);
  });

  it('counts behavioural filters on an action (event_type "actions"): events matching any step', async () => {
    const action = await t.api('POST', `/api/projects/${t.projectId}/actions/`, {
      name: 'Bought or identified',
      steps: [{ event: 'purchased' }, { event: '$identify' }],
    });
    expect(action.status, action.text).toBe(201);
    const make = async (key: unknown) => {
      const res = await t.api('POST', cohorts(), {
        name: 'Active',
        filters: {
          properties: {
            type: 'AND',
            values: [
              {
                type: 'behavioral',
                value: 'performed_event',
                key,
                event_type: 'actions',
                time_value: 7,
                time_interval: 'day',
                operator: 'gte',
                operator_value: 4,
              },
            ],
          },
        },
      });
      expect(res.status, res.text).toBe(201);
      return calculated(res.body.id);
    };
    // in the last 7 days: b1 3 purchases; b3 3 purchases (one as anon-b3) and its $identify
    expect(await make(action.body.id)).toMatchObject({ count: 1, errors_calculating: 0 });
    expect(await make(String(action.body.id))).toMatchObject({ count: 1 });
    // an action that is not there: the calculation records an error, as any other failure
    expect(await make(987654)).toMatchObject({ count: 0, errors_calculating: 1 });
    const refused = await t.api('POST', cohorts(), {
      name: 'x',
      filters: {
        properties: {
          type: 'AND',
          values: [
            {
              type: 'behavioral',
              value: 'performed_event',
              key: 'purchased',
              event_type: 'actions',
              time_value: 7,
              time_interval: 'day',
            },
          ],
        },
      },
    });
    expect(refused.status, refused.text).toBe(400);
  });
});
