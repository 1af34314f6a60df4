/**
 * PostHog's bucketing hash, bit for bit (flags.md §2): sha1 of `<flag key>.<identifier><salt>`,
 * the first 15 hex digits as an integer, divided by LONG_SCALE = 0xFFFFFFFFFFFFFFF. The integer
 * and LONG_SCALE are both rounded to doubles first (LONG_SCALE becomes exactly 2^60), as in the
 * Python server, the Rust service and every SDK; `parseInt(hex15, 16) / LONG_SCALE` reproduces
 * that rounding.
 */
import { hash } from 'node:crypto';
import type { FlagVariant } from '../../../commands/featureFlags/model/flagFilters.ts';

// biome-ignore lint/correctness/noPrecisionLoss: PostHog's constant; its double rounding is the point
const LONG_SCALE = 0xfffffffffffffff;

function sha1Fraction(input: string): number {
  // One-shot hash (Node ≥ 20.12): several times quicker than createHash for short inputs.
  const hex = hash('sha1', input, 'hex');
  return Number.parseInt(hex.slice(0, 15), 16) / LONG_SCALE;
}

/** Hash in [0, 1] for rollout (`salt` "") or variant selection (`salt` "variant"). */
export const flagHash = (flagKey: string, identifier: string, salt = ''): number =>
  sha1Fraction(`${flagKey}.${identifier}${salt}`);

/** Holdouts hash `holdout-<identifier>`: no flag key, so the set held out is the same for every flag. */
export const holdoutHash = (identifier: string): number => sha1Fraction(`holdout-${identifier}`);

/** A condition's rollout admits the identifier when hash ≤ pct/100 (so 100 admits everyone). */
export const inRollout = (flagKey: string, identifier: string, percentage: number): boolean =>
  flagHash(flagKey, identifier) <= percentage / 100;

/**
 * The variant whose range [min, max) holds the variant hash; ranges are a running sum of
 * `rollout_percentage / 100` in listed order, in floating point exactly as PostHog sums them.
 * Undefined when no range holds it (sums under 100, or float rounding at the top).
 */
export function variantFor(
  flagKey: string,
  identifier: string,
  variants: readonly FlagVariant[],
): string | undefined {
  if (variants.length === 0) return undefined;
  const hash = flagHash(flagKey, identifier, 'variant');
  let min = 0;
  for (const variant of variants) {
    const max = min + variant.rollout_percentage / 100.0;
    if (hash >= min && hash < max) return variant.key;
    min = max;
  }
  return undefined;
}
