/**
 * The tree a flag regex parses to (`regexSyntax.ts`), and the two ways a pattern is refused:
 * `invalid` (Rust's `regex` rejects it too) or `unsupported` (valid for `fancy_regex`, which
 * PostHog's flags service uses, but not handled by this engine).
 */
import type { CharTest } from './charClasses.ts';

export type AssertKind =
  | 'textStart'
  | 'textEnd'
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

export class RegexRefusal extends Error {
  constructor(
    readonly kind: 'invalid' | 'unsupported',
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
