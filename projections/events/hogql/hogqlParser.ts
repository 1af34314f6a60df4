/**
 * Recursive-descent parser of the HogQL expression subset (queries/events/README.md).
 *
 *   expr       := or
 *   or         := and (OR and)*
 *   and        := not (AND not)*
 *   not        := NOT not | comparison
 *   comparison := additive [ (= | == | != | <> | < | <= | > | >=) additive
 *                          | [NOT] (LIKE | ILIKE) additive
 *                          | [NOT] IN '(' expr (',' expr)* ')'
 *                          | IS [NOT] NULL ]
 *   additive   := term (('+' | '-') term)*
 *   term       := unary (('*' | '/' | '%') unary)*
 *   unary      := '-' unary | primary
 *   primary    := number | string | TRUE | FALSE | NULL | '(' expr ')'
 *               | name '(' [DISTINCT] [ '*' | expr (',' expr)* ] ')'
 *               | name ('.' (name | number) | '[' string ']')*
 *
 * Select items may end in `AS alias`; orderBy items in ASC/DESC (or start with '-').
 *
 * Bounded (hogqlLimits.ts): the parser's own recursion stops at `MAX_DEPTH` levels, so no input
 * can exhaust its stack, and the finished tree is measured once more (operator chains).
 */
import type { ArithOp, CompareOp, Expr } from './hogqlAst.ts';
import { depthOf, MAX_DEPTH, MAX_EXPRESSION_LENGTH, tooDeep } from './hogqlLimits.ts';
import { HogQLError, type Token, tokenize } from './hogqlTokenizer.ts';

export type { ArithOp, CompareOp, Expr } from './hogqlAst.ts';
export { depthOf, MAX_DEPTH, MAX_EXPRESSION_LENGTH } from './hogqlLimits.ts';

/** Keywords that cannot stand as bare field names. */
const RESERVED = new Set([
  'and',
  'or',
  'not',
  'in',
  'is',
  'null',
  'like',
  'ilike',
  'true',
  'false',
  'as',
  'distinct',
  'asc',
  'desc',
]);
/** Full-HogQL constructs outside the subset, named in the error. */
const UNSUPPORTED_KEYWORDS = new Map<string, string>([
  ...['select', 'from', 'join', 'union', 'with'].map((k) => [k, 'subqueries'] as [string, string]),
  ...['where', 'group', 'having', 'order', 'limit', 'offset', 'by'].map(
    (k) => [k, 'clauses inside an expression'] as [string, string],
  ),
  ['case', 'CASE expressions'],
  ['when', 'CASE expressions'],
  ['then', 'CASE expressions'],
  ['else', 'CASE expressions'],
  ['end', 'CASE expressions'],
  ['between', 'BETWEEN'],
  ['interval', 'INTERVAL'],
  ['global', 'GLOBAL IN'],
  ['over', 'window functions'],
  ['lambda', 'lambdas'],
]);
const COMPARE: Record<string, CompareOp> = {
  '=': '=',
  '==': '=',
  '!=': '!=',
  '<>': '!=',
  '<': '<',
  '<=': '<=',
  '>': '>',
  '>=': '>=',
};

class Parser {
  private i = 0;
  /** levels entered: parentheses, arguments, NOT, unary minus (the whole expression is level 0) */
  private depth = -1;
  constructor(private readonly tokens: Token[]) {}

  private get peek(): Token {
    return this.tokens[this.i]!;
  }
  private next(): Token {
    return this.tokens[this.i++]!;
  }
  private describe(t: Token): string {
    if (t.kind === 'eof') return 'end of input';
    if (t.kind === 'string') return `string '${t.value}'`;
    if (t.kind === 'number') return `number ${t.text}`;
    return `"${t.value}"`;
  }
  fail(t: Token = this.peek): never {
    if (t.kind === 'ident' && !t.quoted && UNSUPPORTED_KEYWORDS.has(t.value.toLowerCase())) {
      throw new HogQLError(
        `Unsupported HogQL: ${UNSUPPORTED_KEYWORDS.get(t.value.toLowerCase())} ("${t.value}" at position ${t.pos})`,
      );
    }
    throw new HogQLError(`Unexpected ${this.describe(t)} at position ${t.pos}`);
  }
  isKeyword(word: string, offset = 0): boolean {
    const t = this.tokens[this.i + offset]!;
    return t.kind === 'ident' && !t.quoted && t.value.toLowerCase() === word;
  }
  acceptKeyword(word: string): boolean {
    if (!this.isKeyword(word)) return false;
    this.i++;
    return true;
  }
  isOp(op: string): boolean {
    return this.peek.kind === 'op' && this.peek.value === op;
  }
  acceptOp(op: string): boolean {
    if (!this.isOp(op)) return false;
    this.i++;
    return true;
  }
  expectOp(op: string): void {
    if (!this.acceptOp(op)) this.fail();
  }
  alias(): string {
    const t = this.next();
    if (t.kind !== 'ident' || (!t.quoted && RESERVED.has(t.value.toLowerCase())))
      return this.fail(t);
    return t.value;
  }
  expectEnd(): void {
    if (this.peek.kind !== 'eof') this.fail();
  }

  /** Runs one level of the descent, refusing to go deeper than `MAX_DEPTH`. */
  private nested<T>(parse: () => T): T {
    if (++this.depth > MAX_DEPTH) throw tooDeep();
    const e = parse();
    this.depth--;
    return e;
  }
  expr(): Expr {
    return this.nested(() => this.or());
  }
  private or(): Expr {
    const args = [this.and()];
    while (this.acceptKeyword('or')) args.push(this.and());
    return args.length === 1 ? args[0]! : { kind: 'or', args };
  }
  private and(): Expr {
    const args = [this.not()];
    while (this.acceptKeyword('and')) args.push(this.not());
    return args.length === 1 ? args[0]! : { kind: 'and', args };
  }
  private not(): Expr {
    if (
      this.isKeyword('not') &&
      !this.isKeyword('in', 1) &&
      !this.isKeyword('like', 1) &&
      !this.isKeyword('ilike', 1)
    ) {
      this.i++;
      return { kind: 'not', expr: this.nested(() => this.not()) };
    }
    return this.comparison();
  }
  private comparison(): Expr {
    const left = this.additive();
    const t = this.peek;
    if (t.kind === 'op' && COMPARE[t.value]) {
      this.i++;
      return { kind: 'compare', op: COMPARE[t.value]!, left, right: this.additive() };
    }
    if (this.acceptKeyword('is')) {
      const negated = this.acceptKeyword('not');
      if (!this.acceptKeyword('null')) this.fail();
      return { kind: 'isNull', negated, expr: left };
    }
    const negated =
      this.isKeyword('not') &&
      (this.isKeyword('in', 1) || this.isKeyword('like', 1) || this.isKeyword('ilike', 1));
    if (negated) this.i++;
    if (this.acceptKeyword('like'))
      return { kind: 'compare', op: negated ? 'not like' : 'like', left, right: this.additive() };
    if (this.acceptKeyword('ilike'))
      return { kind: 'compare', op: negated ? 'not ilike' : 'ilike', left, right: this.additive() };
    if (this.acceptKeyword('in')) {
      this.expectOp('(');
      const list = [this.expr()];
      while (this.acceptOp(',')) list.push(this.expr());
      this.expectOp(')');
      return { kind: 'in', negated, left, list };
    }
    return left;
  }
  private additive(): Expr {
    let left = this.term();
    while (this.isOp('+') || this.isOp('-')) {
      const op = (this.next() as { value: string }).value as ArithOp;
      left = { kind: 'arith', op, left, right: this.term() };
    }
    return left;
  }
  private term(): Expr {
    let left = this.unary();
    while (this.isOp('*') || this.isOp('/') || this.isOp('%')) {
      const op = (this.next() as { value: string }).value as ArithOp;
      left = { kind: 'arith', op, left, right: this.unary() };
    }
    return left;
  }
  private unary(): Expr {
    if (this.acceptOp('-')) {
      const inner = this.nested(() => this.unary());
      if (inner.kind === 'constant' && typeof inner.value === 'number')
        return { kind: 'constant', value: -inner.value };
      if (inner.kind === 'constant' && typeof inner.value === 'bigint')
        return { kind: 'constant', value: exactInteger(-inner.value) };
      return { kind: 'neg', expr: inner };
    }
    return this.primary();
  }
  private primary(): Expr {
    const t = this.next();
    if (t.kind === 'number') return { kind: 'constant', value: t.value };
    if (t.kind === 'string') return { kind: 'constant', value: t.value };
    if (t.kind === 'op' && t.value === '(') {
      const inner = this.expr();
      if (this.isOp(','))
        throw new HogQLError(`Unsupported HogQL: tuples (position ${this.peek.pos})`);
      this.expectOp(')');
      return inner;
    }
    if (t.kind !== 'ident') return this.fail(t);
    const word = t.value.toLowerCase();
    if (!t.quoted) {
      if (word === 'true' || word === 'false') return { kind: 'constant', value: word === 'true' };
      if (word === 'null') return { kind: 'constant', value: null };
      if (UNSUPPORTED_KEYWORDS.has(word) || RESERVED.has(word)) return this.fail(t);
    }
    if (!t.quoted && this.acceptOp('(')) return this.call(t.value);
    return this.field(t.value);
  }
  private call(name: string): Expr {
    const distinct = this.acceptKeyword('distinct');
    if (this.acceptOp('*')) {
      this.expectOp(')');
      return { kind: 'call', name, args: [], distinct, star: true };
    }
    const args: Expr[] = [];
    if (!this.acceptOp(')')) {
      args.push(this.expr());
      while (this.acceptOp(',')) args.push(this.expr());
      this.expectOp(')');
    }
    if (this.isOp('('))
      throw new HogQLError(`Unsupported HogQL: parametric functions (position ${this.peek.pos})`);
    return { kind: 'call', name, args, distinct, star: false };
  }
  private field(first: string): Expr {
    const chain = [first];
    for (;;) {
      if (this.acceptOp('.')) {
        const t = this.next();
        if (t.kind === 'ident') chain.push(t.value);
        else if (t.kind === 'number' && /^\d+$/.test(t.text)) chain.push(t.text);
        else this.fail(t);
      } else if (this.acceptOp('[')) {
        const t = this.next();
        if (t.kind !== 'string')
          throw new HogQLError(`Expected a quoted key inside [...] at position ${t.pos}`);
        chain.push(t.value);
        this.expectOp(']');
      } else {
        return { kind: 'field', chain };
      }
    }
  }
}

/** A negated bigint literal back to a number when JavaScript holds it exactly. */
const exactInteger = (n: bigint): number | bigint =>
  Number.isSafeInteger(Number(n)) ? Number(n) : n;

function parserOf(text: string): Parser {
  if (text.length > MAX_EXPRESSION_LENGTH)
    throw new HogQLError(`the expression is longer than ${MAX_EXPRESSION_LENGTH} characters`);
  return new Parser(tokenize(text));
}
/** The parsed tree, once its depth is known to be within `MAX_DEPTH`. */
function bounded(expr: Expr): Expr {
  if (depthOf(expr) > MAX_DEPTH) throw tooDeep();
  return expr;
}

/** One HogQL expression, nothing after it. */
export function parseExpr(text: string): Expr {
  const p = parserOf(text);
  const expr = p.expr();
  p.expectEnd();
  return bounded(expr);
}

/** A select item: an expression with an optional `AS alias`. */
export function parseSelectItem(text: string): { expr: Expr; alias: string | null } {
  const p = parserOf(text);
  const expr = p.expr();
  let alias: string | null = null;
  if (p.acceptKeyword('as')) alias = p.alias();
  p.expectEnd();
  return { expr: bounded(expr), alias };
}

/** An orderBy item: `-expr`, or `expr [ASC|DESC]`. */
export function parseOrderItem(text: string): { expr: Expr; desc: boolean } {
  const trimmed = text.trim();
  if (trimmed.startsWith('-')) return { expr: parseExpr(trimmed.slice(1)), desc: true };
  const p = parserOf(trimmed);
  const expr = p.expr();
  const desc = p.acceptKeyword('desc');
  if (!desc) p.acceptKeyword('asc');
  p.expectEnd();
  return { expr: bounded(expr), desc };
}
