/**
 * Number literals exactly as written. PostHog's parser hands its AST over as JSON: an integer
 * past 2^53 that fits 64 bits is a bare JSON number (JavaScript would round it), a larger one is
 * text marked `value_type: "number"`, and a number past a 64-bit float (`1e400`) is
 * "Infinity" — as are the keywords `inf` and `nan`. Here every integer outside JavaScript's safe
 * range becomes a bigint (printed digit for digit, so ClickHouse gives it the width it gives the
 * literal: Int64, UInt64, else Float64), `inf`/`nan` stay ClickHouse's, and an overflowing
 * number is refused with a 400 naming it.
 */
import { HogQLError } from './errors.ts';

/** A node of the parser's AST, as much as this file reads of it (parser.ts `Node`). */
type AstNode = { [key: string]: unknown; start?: { offset: number }; end?: { offset: number } };

/**
 * The parser's JSON with each long integer constant as marked text, before JSON.parse rounds it.
 * `"value":` can only open a key here: inside a JSON string every `"` is escaped.
 */
export function exactIntegersJson(json: string): string {
  return json.replace(/([{,]"value":)(-?\d{16,})(?=[,}])/g, (whole, key: string, digits: string) =>
    Number.isSafeInteger(Number(digits)) ? whole : `${key}"${digits}","value_type":"number"`,
  );
}

/** The characters start..end of the text; the parser counts offsets in code points. */
const literalAt = (text: string, start: number, end: number) =>
  Array.from(text).slice(start, end).join('').trim();

const KEYWORD = /^(-\s*)?(inf|nan)$/i;

/** Marked number constants (see above) as bigint, Infinity or NaN; an overflowing one refused. */
export function exactNumbers<T>(root: T, text: string): T {
  const pending: unknown[] = [root];
  for (let value = pending.pop(); value !== undefined; value = pending.pop()) {
    if (Array.isArray(value)) {
      for (const item of value) pending.push(item); // no spread: an IN list may be 100,000 long
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    const n = value as AstNode;
    if (n.node === 'Constant' && n.value_type === 'number' && typeof n.value === 'string') {
      n.value = number(n, text);
      delete n.value_type;
      continue;
    }
    for (const [key, child] of Object.entries(n))
      if (key !== 'start' && key !== 'end' && typeof child === 'object') pending.push(child);
  }
  return root;
}

function number(n: AstNode, text: string): bigint | number {
  const value = String(n.value);
  if (/^-?\d+$/.test(value)) return BigInt(value);
  const start = n.start?.offset ?? 0;
  const literal = literalAt(text, start, n.end?.offset ?? text.length);
  const keyword = KEYWORD.exec(literal);
  if (keyword)
    return keyword[2]!.toLowerCase() === 'nan' ? Number.NaN : keyword[1] ? -Infinity : Infinity;
  // no span: the detail says where, and the literal is all there is to show
  throw new HogQLError(
    `Number ${literal || value} at position ${start} is out of range: numbers must fit a 64-bit float (about ±1.8e308)`,
  );
}
