/**
 * One rule for text on its way to a store: NUL (U+0000) and lone UTF-16 surrogates, in any key or
 * string, become U+FFFD. Postgres text and jsonb cannot hold NUL, and jsonb refuses an unpaired
 * surrogate ("invalid input syntax for type json"); the log's `json` column keeps both, so one such
 * event would stop a read model for good. capture-rs replaces NUL in distinct ids the same way, a
 * client that cuts a string inside an emoji sends the other kind, and PostHog keeps such events:
 * so do we, everywhere (capture, every /api body, every event read from the log), rather than
 * refuse them (docs/DECISIONS.md, "NUL and lone surrogates become U+FFFD").
 */

/**
 * Whether JSON text may carry a NUL or a lone surrogate: as a `\u` escape (how JSON.stringify and
 * Postgres write them), or as a raw UTF-16 unit (an lz64 payload decompresses to a JS string). A
 * pair (an emoji) or an escaped backslash followed by `u0000` also match: they only cost the walk.
 */
const MAY_HOLD = /\\u0000|\\u[dD][89a-fA-F]|[\0\uD800-\uDFFF]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/** a NUL or a lone surrogate (a pair, an emoji, is fine) */
const UNSTORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The cheap test on JSON text (a scan, no allocation); false means its value is storable as is. */
export const mayHoldUnstorable = (jsonText: string): boolean => MAY_HOLD.test(jsonText);

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

/** JSON.parse, and storable: the text test first, so a clean text costs one scan more. */
export function parseStorableJson(text: string): unknown {
  const value: unknown = JSON.parse(text);
  return mayHoldUnstorable(text) ? storableValue(value) : value;
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
