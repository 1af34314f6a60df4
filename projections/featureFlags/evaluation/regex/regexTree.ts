/**
 * The tree a flag regex parses to (`regexSyntax.ts`), and the ways a pattern is refused:
 * `invalid` (Rust's `regex` rejects it too), `unsupported` (valid for `fancy_regex`, which
 * PostHog's flags service uses, but not handled by this engine), or `budget` (the match would
 * take too long). Also the parser's escape tables.
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

/** Escapes that name one code point (`\e` is fancy_regex's). */
export const SIMPLE_ESCAPES: Record<string, number> = {
  n: 10,
  t: 9,
  r: 13,
  f: 12,
  v: 11,
  a: 7,
  e: 27,
};

/** Escapes that are assertions. */
export const ASSERTIONS: Record<string, AssertKind> = {
  A: 'textStart',
  // fancy_regex: \G is where the previous match ended, the start for a single search.
  G: 'textStart',
  z: 'textEnd',
  Z: 'textEndBeforeNewlines',
  b: 'wordBoundary',
  B: 'notWordBoundary',
  '<': 'wordStart',
  '>': 'wordEnd',
};

/** fancy_regex `\R`: any line break, `\r\n` as one. */
export const LINE_BREAK: RegexNode = {
  t: 'alt',
  items: [
    { t: 'cat', items: [13, 10].map((cp) => ({ t: 'char', test: (x: number) => x === cp })) },
    { t: 'char', test: (x) => x === 10 || x === 11 || x === 12 || x === 13 },
  ],
};
