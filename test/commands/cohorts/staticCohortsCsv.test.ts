import { describe, expect, it } from 'vitest';
import {
  distinctIdsOfCsv,
  MAX_CSV_LINE_CHARS,
  MAX_CSV_ROWS,
} from '../../../commands/cohorts/staticCohorts.ts';

/** The DomainError a rejected CSV fails with. */
const refusal = async (csv: string) =>
  distinctIdsOfCsv(csv).then(
    () => expect.unreachable('accepted'),
    (error: { error?: unknown }) => error.error,
  );

describe('distinctIdsOfCsv: the ids of a static cohort CSV, read in chunks', () => {
  it('reads the first column across chunks: header skipped, blanks and repeats left out, quotes kept', async () => {
    const long = 'x'.repeat(5_000);
    const csv = ['distinct_id,name', 'a,1', '', ' b ,2', 'a,3', `"multi\nline",4`, `${long},5`];
    const body = `${csv.join('\n')}\n${Array.from({ length: 3_000 }, (_, i) => `id-${i}`).join('\n')}`;
    const ids = await distinctIdsOfCsv(body);
    expect(ids.slice(0, 4)).toEqual(['a', 'b', 'multi\nline', long]);
    expect(ids).toHaveLength(4 + 3_000);
  });

  it('takes a line of exactly the limit and refuses one character more (400 on csv)', async () => {
    const atLimit = `a${','.repeat(MAX_CSV_LINE_CHARS - 1)}`;
    expect(await distinctIdsOfCsv(`x\n${atLimit}\ny`)).toEqual(['x', 'a', 'y']);
    expect(await refusal(`x\n${atLimit},\ny`)).toMatchObject({
      kind: 'validation',
      attr: 'csv',
      detail: expect.stringContaining(`${MAX_CSV_LINE_CHARS} characters`),
    });
  });

  it(`refuses more than ${MAX_CSV_ROWS} rows (413), repeats counted`, async () => {
    expect(await refusal('a\n'.repeat(MAX_CSV_ROWS + 1))).toMatchObject({ kind: 'too_large' });
  }, 30_000);

  it('refuses a CSV csv-parse cannot read (400 on csv)', async () => {
    expect(await refusal('"open quote\nnever closed')).toMatchObject({ attr: 'csv' });
  });
});
