/**
 * The tree a flag regex parses to (`regexSyntax.ts`), and the ways a pattern is refused:
 * `invalid` (Rust's `regex` rejects it too), `unsupported` (valid for `fancy_regex`, which
 * PostHog's flags service uses, but not handled by this engine), or `budget` (the match would
 * take too long).
 */
import type { CharTest } from './charClasses.ts';

export type AssertKind =
  | 'textStart'
  | 'textEnd'
  /** fancy_regex `\Z`: the end, or before the newlines that end the text */
  | 'textEndBeforeNewlines'
  | 'lineStart'
  | 'lineEnd'
  | 'wordBoundary'
  | 'notWordBoundary'
  | 'wordStart'
  | 'wordEnd';

export type RegexNode =
  | { t: 'empty' }
  | { t: 'char'; test: CharTest }
  | { t: 'assert'; kind: AssertKind }
  | { t: 'cat'; items: RegexNode[] }
  | { t: 'alt'; items: RegexNode[] }
  | { t: 'repeat'; node: RegexNode; min: number; max: number };

/** `budget`: the match ran past the step budget (the flags service's backtrack limit). */
export type RefusalKind = 'invalid' | 'unsupported' | 'budget';

export class RegexRefusal extends Error {
  constructor(
    readonly kind: RefusalKind,
    detail: string,
  ) {
    super(detail);
  }
}
export const invalid = (detail: string): never => {
  throw new RegexRefusal('invalid', detail);
};
export const unsupported = (detail: string): never => {
  throw new RegexRefusal('unsupported', detail);
};
