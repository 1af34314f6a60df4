import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';

/** Values anyone with the project key can set reach spreadsheets as text, never as formulas. */
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
  await capture(t, [
    {
      event: 'formula',
      distinct_id: 'formula-person',
      properties: { cell: '@SUM(A1:A9)', $set: { email: '=HYPERLINK("http://evil")', plan: '+1' } },
    },
  ]);
}, 120_000);
afterAll(async () => {
  await t?.close();
});

const csv = async (path: string) => {
  const res = await fetch(`${t.url}${path}`, {
    headers: { authorization: `Bearer ${t.personalApiKey}` },
  });
  expect(res.status).toBe(200);
  const [header, ...rows] = parse(await res.text(), { relax_column_count: true }) as string[][];
  return rows.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i]])));
};

describe('CSV exports neutralise formula cells', () => {
  it('persons list and one person', async () => {
    const [row] = await csv(
      `/api/projects/${t.projectId}/persons/?format=csv&distinct_id=formula-person`,
    );
    expect(row!['properties.email']).toBe(`'=HYPERLINK("http://evil")`);
    expect(row!['properties.plan']).toBe(`'+1`);
    expect(row!.name).toBe(`'=HYPERLINK("http://evil")`);
  });

  it('events list', async () => {
    const rows = await csv(`/api/projects/${t.projectId}/events/?format=csv&event=formula`);
    expect(rows[0]!['properties.cell']).toBe(`'@SUM(A1:A9)`);
  });
});
