/**
 * A change's before and after as leaf lines, `groups[0].rollout_percentage: 0 → 100`, so a history entry reads as
 * what changed rather than two JSON documents. Pure.
 */
export type DiffLine = { path: string; before: string; after: string };

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const show = (v: unknown) => (v === undefined ? '—' : JSON.stringify(v));

function walk(path: string, before: unknown, after: unknown, out: DiffLine[]): void {
  if (JSON.stringify(before) === JSON.stringify(after)) return;
  if (Array.isArray(before) && Array.isArray(after)) {
    for (let i = 0; i < Math.max(before.length, after.length); i++)
      walk(`${path}[${i}]`, before[i], after[i], out);
    return;
  }
  if (isObj(before) && isObj(after)) {
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)]))
      walk(path ? `${path}.${key}` : key, before[key], after[key], out);
    return;
  }
  out.push({ path, before: show(before), after: show(after) });
}

export function diffLines(field: string, before: unknown, after: unknown): DiffLine[] {
  const out: DiffLine[] = [];
  walk(field, before, after, out);
  return out;
}
