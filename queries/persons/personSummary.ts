import type pg from 'pg';

/** The `person` of an event in the events REST list (capture.md §4.2). */
export type PersonSummary = {
  is_identified: boolean;
  /** the person's first distinct id only (oldest attached), as PostHog sends */
  distinct_ids: string[];
  /** only `email`, `name` and `username`, those the person has */
  properties: Record<string, unknown>;
};

const SUMMARY_KEYS = ['email', 'name', 'username'] as const;

/**
 * The persons of `distinctIds` in one project, from the persons read model: a map from each
 * distinct id that has a person to that person's summary. Distinct ids without a person (unknown,
 * personless, or of a deleted person) are absent: the events list shows `person: null` for them.
 */
export async function personSummariesForDistinctIds(
  pool: Pick<pg.Pool, 'query'>,
  projectId: number,
  distinctIds: readonly string[],
): Promise<Map<string, PersonSummary>> {
  const out = new Map<string, PersonSummary>();
  const wanted = [...new Set(distinctIds)];
  if (wanted.length === 0) return out;
  const { rows } = await pool.query<{ distinct_id: string; is_identified: boolean; properties: Record<string, unknown>; first_id: string }>(
    `SELECT m.distinct_id, p.is_identified, p.properties,
            (SELECT d.distinct_id FROM person_distinct_ids d WHERE d.person_id = p.id ORDER BY d.ord LIMIT 1) AS first_id
       FROM person_distinct_ids m JOIN persons p ON p.id = m.person_id AND p.project_id = m.project_id
      WHERE m.project_id = $1::int AND m.distinct_id = ANY($2::text[])`,
    [projectId, wanted],
  );
  for (const r of rows) {
    const properties: Record<string, unknown> = {};
    for (const k of SUMMARY_KEYS) if (k in r.properties) properties[k] = r.properties[k];
    out.set(r.distinct_id, { is_identified: r.is_identified, distinct_ids: [r.first_id ?? r.distinct_id], properties });
  }
  return out;
}
