/**
 * One rule for text on its way to a store: NUL (U+0000) and lone UTF-16 surrogates, in any key or
 * string, become U+FFFD. Postgres text and jsonb cannot hold NUL, and jsonb refuses an unpaired
 * surrogate ("invalid input syntax for type json"); the log's `json` column keeps both, so one such
 * event would stop a read model for good. capture-rs replaces NUL in distinct ids the same way, a
 * client that cuts a string inside an emoji sends the other kind, and PostHog keeps such events:
 * so do we, everywhere (capture, every /api body, every event read from the log), rather than
 * refuse them (docs/DECISIONS.md, "NUL and lone surrogates become U+FFFD").
 */

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/** a NUL or a lone surrogate (a pair, an emoji, is fine) */
const UNSTORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const ESCAPED = /\\u(?:0000|[dD][89a-fA-F])/;

/**
 * Whether JSON text decoded from UTF-8 (a request body, the log's column) may carry a NUL or a lone
 * surrogate. Such text holds neither raw (UTF-8 cannot, and JSON refuses a raw NUL), only as a
 * `\u` escape, as JSON.stringify writes them: a scan for `\u` first (35 ns a 1 KB event, against
 * 3 µs for its JSON.parse), the regex only on text that has one. An escaped pair (`\ud83d\ude00`,
 * as Python clients write an emoji) or an escaped backslash before `u0000` also match: they cost a
 * walk that finds nothing.
 */
export const escapesUnstorable = (jsonText: string): boolean =>
  jsonText.includes('\\u') && ESCAPED.test(jsonText);

/** The same for any JS string, which may hold them raw too (an lz64 payload decompresses to one). */
export const mayHoldUnstorable = (text: string): boolean =>
  escapesUnstorable(text) || UNSTORABLE.test(text);

/** The string with each NUL and lone surrogate as U+FFFD (the same string when it has none). */
export function storableString(s: string): string {
  if (!UNSTORABLE.test(s)) return s;
  return s.replace(/\0/g, '\uFFFD').replace(LONE_SURROGATE, '\uFFFD');
}

/**
 * A JSON-like value with every key and string storable: the same value (no copy) when it already
 * is, otherwise a copy. Only arrays and plain objects are walked (a Buffer or Date is left alone).
 * Recursive: its callers' values are bounded in depth (the JSON parsers' depth limits).
 */
export function storableValue<T>(value: T): T {
  return needsCleaning(value) ? (cleaned(value) as T) : value;
}

/** JSON.parse of text decoded from UTF-8, storable: a clean text costs `escapesUnstorable` more. */
export function parseStorableJson(text: string): unknown {
  const value: unknown = JSON.parse(text);
  return escapesUnstorable(text) ? storableValue(value) : value;
}

const isPlainObject = (v: object): v is Record<string, unknown> => {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

function needsCleaning(value: unknown): boolean {
  if (typeof value === 'string') return UNSTORABLE.test(value);
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.some(needsCleaning);
  if (!isPlainObject(value)) return false;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (UNSTORABLE.test(key) || needsCleaning(value[key])) return true;
  }
  return false;
}

function cleaned(value: unknown): unknown {
  if (typeof value === 'string') return storableString(value);
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(cleaned);
  if (!isPlainObject(value)) return value;
  // Object.fromEntries defines own properties: a `__proto__` key stays a key.
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [storableString(k), cleaned(v)]));
}
