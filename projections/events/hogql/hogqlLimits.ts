/**
 * Bounds of one HogQL expression, checked before anything reaches ClickHouse, whose parser stops
 * at an AST 1,000 levels deep (TOO_DEEP_AST) and where every level here becomes one to three
 * function calls: at most `MAX_EXPRESSION_LENGTH` characters and `MAX_DEPTH` levels deep. Depth
 * counts every nesting: parentheses, function arguments, NOT, unary minus, and each operator of a
 * chain (`a + b + c` is `plus(plus(a, b), c)`). Measured at 100 levels, the deepest-compiling
 * forms (nested LIKE, IN, comparisons of comparisons) still run in ClickHouse.
 */
import type { Expr } from './hogqlAst.ts';
import { HogQLError } from './hogqlTokenizer.ts';

/** Characters in one expression (a select, where or orderBy item, a `hogql` property filter). */
export const MAX_EXPRESSION_LENGTH = 4000;
/** Levels of nesting in one expression (see the file comment). */
export const MAX_DEPTH = 100;

export const tooDeep = () =>
  new HogQLError(`the expression is nested more than ${MAX_DEPTH} levels deep`);

/**
 * The depth of a parsed tree: the operators and calls on its longest path (a leaf is 0, `a = 1` is
 * 1, a chain of 2,000 `+` is 2,000), measured without recursion.
 */
export function depthOf(root: Expr): number {
  let deepest = 0;
  const pending: [Expr, number][] = [[root, 0]];
  for (let item = pending.pop(); item; item = pending.pop()) {
    const [e, depth] = item;
    const children =
      e.kind === 'call' || e.kind === 'and' || e.kind === 'or'
        ? e.args
        : e.kind === 'compare' || e.kind === 'arith'
          ? [e.left, e.right]
          : e.kind === 'in'
            ? [e.left, ...e.list]
            : e.kind === 'not' || e.kind === 'neg' || e.kind === 'isNull'
              ? [e.expr]
              : [];
    if (e.kind !== 'constant' && e.kind !== 'field') deepest = Math.max(deepest, depth + 1);
    for (const child of children) pending.push([child, depth + 1]);
  }
  return deepest;
}
