/**
 * The `semver_*` operators as posthog-node 5 (`@posthog/core`, strict policy) reads versions:
 * trim, drop a leading v/V, cut `-pre` and `+build`, take the first three dot parts (missing
 * ones are 0; `1.2.3.4` is 1.2.3); a part must be digits without a leading zero. Ranges:
 * `~1.2.3` is [1.2.3, 1.3.0), `^` bumps the leftmost non-zero part, `1.2.*` is [1.2.0, 1.3.0).
 */
export type Semver = readonly [number, number, number];
export type SemverRange = { lower: Semver; upper: Semver };

function part(text: string | undefined): number | undefined {
  if (text === undefined || text === '') return 0;
  if (!/^\d+$/.test(text) || (text.length > 1 && text.startsWith('0'))) return undefined;
  return Number.parseInt(text, 10);
}

export function parseSemver(value: unknown): Semver | undefined {
  const text = String(value).trim().replace(/^[vV]/, '');
  const base = text.split('-')[0]!.split('+')[0]!;
  if (base === '' || base.startsWith('.')) return undefined;
  const parts = base.split('.');
  const major = part(parts[0]);
  const minor = part(parts[1]);
  const patch = part(parts[2]);
  if (major === undefined || minor === undefined || patch === undefined) return undefined;
  return [major, minor, patch];
}

export function compareSemver(a: Semver, b: Semver): number {
  for (let i = 0; i < 3; i++) {
    if (a[i]! !== b[i]!) return a[i]! < b[i]! ? -1 : 1;
  }
  return 0;
}

export function tildeRange(value: unknown): SemverRange | undefined {
  const v = parseSemver(value);
  return v && { lower: v, upper: [v[0], v[1] + 1, 0] };
}

export function caretRange(value: unknown): SemverRange | undefined {
  const v = parseSemver(value);
  if (!v) return undefined;
  const [major, minor, patch] = v;
  const upper: Semver =
    major > 0 ? [major + 1, 0, 0] : minor > 0 ? [0, minor + 1, 0] : [0, 0, patch + 1];
  return { lower: v, upper };
}

const ANY_VERSION: SemverRange = { lower: [0, 0, 0], upper: [Infinity, 0, 0] };

/** `1.2.*` and `1.*`; also `1.*.*` and a bare `*` (the Rust service's readings; posthog-node defers them). */
export function wildcardRange(value: unknown): SemverRange | undefined {
  const raw = String(value).trim().replace(/^[vV]/, '');
  if (raw === '*') return ANY_VERSION;
  const text = raw.replace(/(\.\*)+$/, '').replace(/\*$/, '');
  if (text === '') return undefined;
  const parts = text.split('.');
  const major = part(parts[0]);
  if (major === undefined || parts[0] === '') return undefined;
  if (parts.length === 1) return { lower: [major, 0, 0], upper: [major + 1, 0, 0] };
  const minor = part(parts[1]);
  if (minor === undefined || parts[1] === '') return undefined;
  return { lower: [major, minor, 0], upper: [major, minor + 1, 0] };
}

export const inRange = (v: Semver, r: SemverRange): boolean =>
  compareSemver(v, r.lower) >= 0 && compareSemver(v, r.upper) < 0;
