import { DomainFailure, invalidInput } from '../../../src/core/errors.ts';
/**
 * Tokenizer of the HogQL subset the events API accepts (see queries/events/README.md).
 *
 * Identifiers: letters, digits, `_` and `$` (not starting with a digit), or quoted with backticks
 * or double quotes. Strings: single quotes, with `''` or backslash escapes. Numbers: decimal
 * integers and decimals with an optional exponent. An integer JavaScript cannot hold exactly but a
 * 64-bit ClickHouse integer can (up to 2^64 − 1) stays exact as a bigint; a larger integer is a
 * float, as in ClickHouse; a float beyond ±1.8e308 is refused (it would be infinity).
 */

export class HogQLError extends DomainFailure {
  constructor(
    message: string,
    /** the request parameter the expression came from, when known */
    readonly attr: string | null = null,
  ) {
    super(invalidInput(message, attr));
    this.name = 'HogQLError';
  }
}

export type Token =
  | { kind: 'number'; value: number | bigint; text: string; pos: number }
  | { kind: 'string'; value: string; pos: number }
  | { kind: 'ident'; value: string; quoted: boolean; pos: number }
  | { kind: 'op'; value: string; pos: number }
  | { kind: 'eof'; pos: number };

const OPERATORS = [
  '==',
  '!=',
  '<>',
  '<=',
  '>=',
  '=',
  '<',
  '>',
  '+',
  '-',
  '*',
  '/',
  '%',
  '(',
  ')',
  ',',
  '.',
  '[',
  ']',
];
/** Operators of full HogQL that this subset leaves out, named in the error. */
const UNSUPPORTED = ['->', '::', '||', '?', ':', '{', '}', ';', '!', '|', '&', '^', '~', '#', '@'];

const isIdentStart = (c: string) => /[A-Za-z_$]/.test(c);
const isIdentPart = (c: string) => /[A-Za-z0-9_$]/.test(c);
const ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '0': '\0',
  b: '\b',
  f: '\f',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '`': '`',
};

function readQuoted(
  text: string,
  start: number,
  quote: string,
  what: string,
): { value: string; end: number } {
  let value = '';
  let i = start + 1;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\\') {
      const next = text[i + 1];
      if (next === undefined) break;
      value += ESCAPES[next] ?? next;
      i += 2;
    } else if (c === quote) {
      if (text[i + 1] === quote) {
        value += quote;
        i += 2;
      } else {
        return { value, end: i + 1 };
      }
    } else {
      value += c;
      i++;
    }
  }
  throw new HogQLError(`Unterminated ${what} starting at position ${start}`);
}

const NUMBER = /(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/y;
const UINT64_MAX = 2n ** 64n - 1n;
/** the literal as written, cut for an error message (a number may be 4,000 digits long) */
const shown = (text: string) => (text.length > 24 ? `${text.slice(0, 20)}…` : text);

function numberValue(text: string, pos: number): number | bigint {
  if (/^\d+$/.test(text)) {
    const exact = BigInt(text);
    if (exact <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(exact);
    if (exact <= UINT64_MAX) return exact;
  }
  const value = Number(text);
  if (!Number.isFinite(value))
    throw new HogQLError(
      `Number ${shown(text)} at position ${pos} is out of range: numbers must lie within ±1.8e308 (a 64-bit float)`,
    );
  return value;
}

export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '-' && text[i + 1] === '-')
      throw new HogQLError(`Comments are not supported (position ${i})`);
    if (c === "'") {
      const { value, end } = readQuoted(text, i, "'", 'string');
      tokens.push({ kind: 'string', value, pos: i });
      i = end;
      continue;
    }
    if (c === '`' || c === '"') {
      const { value, end } = readQuoted(text, i, c, 'quoted identifier');
      tokens.push({ kind: 'ident', value, quoted: true, pos: i });
      i = end;
      continue;
    }
    NUMBER.lastIndex = i;
    const number = /[\d.]/.test(c) ? NUMBER.exec(text) : null;
    if (number && (c !== '.' || tokens.at(-1)?.kind !== 'ident')) {
      if (isIdentPart(text[i + number[0].length] ?? ''))
        throw new HogQLError(`Invalid number at position ${i}`);
      tokens.push({ kind: 'number', value: numberValue(number[0], i), text: number[0], pos: i });
      i += number[0].length;
      continue;
    }
    if (isIdentStart(c)) {
      let end = i + 1;
      while (end < text.length && isIdentPart(text[end]!)) end++;
      tokens.push({ kind: 'ident', value: text.slice(i, end), quoted: false, pos: i });
      i = end;
      continue;
    }
    // longest match first, so "->" is refused while "-" is fine, and "!=" accepted while "!" is not
    const op = [...OPERATORS, ...UNSUPPORTED]
      .filter((o) => text.startsWith(o, i))
      .sort((a, b) => b.length - a.length)[0];
    if (!op) throw new HogQLError(`Unexpected character "${c}" at position ${i}`);
    if (UNSUPPORTED.includes(op))
      throw new HogQLError(`Unsupported operator "${op}" at position ${i}`);
    tokens.push({ kind: 'op', value: op, pos: i });
    i += op.length;
  }
  tokens.push({ kind: 'eof', pos: text.length });
  return tokens;
}
