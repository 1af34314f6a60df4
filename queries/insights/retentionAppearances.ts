import type { FastifyRequest } from 'fastify';
import type pg from 'pg';
import { z } from 'zod';
import { PersonView, toPersonView } from '../../commands/persons/model/personView.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';
import { links, peopleOf } from './actorsAnswer.ts';

/**
 * PostHog's answer to `persons/retention/?display=ActionsTable` (the table's people_url): each
 * person of a cohort with `appearances`, 1 for every interval of the row they came back in.
 */
export const RetentionAppearancesResponse = z
  .object({
    result: z.array(
      z.object({
        person: PersonView,
        appearances: z
          .array(z.number().int())
          .describe(
            'index j: 1 when the person did the returning event j intervals after the cohort (j = 0: the cohort itself, always 1)',
          ),
      }),
    ),
    next: z.string().nullable().describe('the next page (same parameters, offset moved on)'),
    missing_persons: z
      .number()
      .int()
      .describe('persons counted in ClickHouse but not (yet) in the persons read model'),
  })
  .meta({ id: 'RetentionAppearances' });

/**
 * The cohort an ActionsTable request names: `selected_interval`, or PostHog's own table link's
 * `breakdown_values=[<cohort>]` (the cohort index is the row's breakdown value there).
 */
export function appearanceCohort(
  selectedInterval: number | undefined,
  breakdownValues: string | undefined,
): number {
  if (selectedInterval !== undefined || breakdownValues === undefined) return selectedInterval ?? 0;
  let parsed: unknown;
  try {
    parsed = JSON.parse(breakdownValues);
  } catch {}
  const first = Array.isArray(parsed) && parsed.length === 1 ? Number(parsed[0]) : Number.NaN;
  if (!Number.isInteger(first) || first < 0)
    fail(
      invalidInput('breakdown_values must be a JSON list of one cohort index.', 'breakdown_values'),
    );
  return first;
}

/**
 * One page of appearance rows as PostHog answers it. Appearances are `length` long: PostHog's
 * `total_intervals − (selected_interval or 0)`.
 */
export async function appearancesJson(
  request: FastifyRequest,
  pool: pg.Pool,
  projectId: number,
  page: { rows: { person: string; appearances: number[] }[]; hasMore: boolean },
  length: number,
  limit: number,
  offset: number,
) {
  const { records, missing } = await peopleOf(
    pool,
    projectId,
    page.rows.map((r) => r.person),
  );
  const byUuid = new Map(records.map((r) => [r.uuid, r]));
  const result = page.rows.flatMap((row) => {
    const record = byUuid.get(row.person);
    if (!record) return [];
    const came = new Set(row.appearances);
    return [
      {
        person: toPersonView(record),
        appearances: Array.from({ length }, (_, j) => (came.has(j) ? 1 : 0)),
      },
    ];
  });
  return {
    result,
    next: links(request, limit, offset, page.hasMore).next,
    missing_persons: missing,
  };
}
