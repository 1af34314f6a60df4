import { isUtf8 } from 'node:buffer';

/**
 * JSON bodies at least this large are parsed piece by piece. A JavaScript string over 128 KB lives
 * in V8's large-object space: decoding a 135 KB `/batch` of 100 posthog-js events into one string
 * cost ≈ 25 µs an event, a hundred times what the same bytes cost as strings under the limit, and
 * the whole text then stayed for a full collection to free (docs/PERFORMANCE.md, "Request bodies
 * and COPY without large strings").
 */
export const PIECES_FROM_BYTES = 64 * 1024;

/** a container's members as byte ranges: [start, end) of each key (objects) and value */
type Members = { keys: [number, number][] | undefined; values: [number, number][] };

const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function trimmed(bytes: Buffer, start: number, end: number): [number, number] {
  let s = start;
  let e = end;
  while (s < e && isSpace(bytes[s]!)) s++;
  while (e > s && isSpace(bytes[e - 1]!)) e--;
  return [s, e];
}

/**
 * Splits the container opening at `open` into its members, at the commas (and, in an object, the
 * colons) of its own level; the brackets of its values only move the depth. Returns the index after
 * its closing bracket and the deepest nesting seen from the document's top (`depth` is the
 * container's own), or undefined when it does not close with its own kind of bracket.
 */
function members(
  bytes: Buffer,
  open: number,
  depth: number,
): { members: Members; end: number; maxDepth: number } | undefined {
  const isObject = bytes[open] === OPEN_OBJECT;
  const keys: [number, number][] | undefined = isObject ? [] : undefined;
  const values: [number, number][] = [];
  let level = 0;
  let maxDepth = depth;
  let inString = false;
  let from = open + 1;
  let colon = -1;
  const close = (at: number) => {
    if (keys) {
      if (colon === -1) {
        // only `{}` (or `{  }`) has a member without a colon
        const [s, e] = trimmed(bytes, from, at);
        return s === e && values.length === 0 && bytes[at] === CLOSE_OBJECT;
      }
      keys.push(trimmed(bytes, from, colon));
      values.push(trimmed(bytes, colon + 1, at));
    } else {
      const piece = trimmed(bytes, from, at);
      if (piece[0] === piece[1] && values.length === 0 && bytes[at] === CLOSE_ARRAY) return true;
      values.push(piece);
    }
    return true;
  };
  for (let i = open + 1; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      level++;
      if (depth + level > maxDepth) maxDepth = depth + level;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (level > 0) level--;
      else {
        if (c !== (isObject ? CLOSE_OBJECT : CLOSE_ARRAY)) return undefined;
        if (!close(i)) return undefined;
        return { members: { keys, values }, end: i + 1, maxDepth };
      }
    } else if (level === 0 && c === COMMA) {
      if (!close(i)) return undefined;
      from = i + 1;
      colon = -1;
    } else if (level === 0 && c === COLON && keys) {
      if (colon !== -1) return undefined;
      colon = i;
    }
  }
  return undefined;
}

type Parsed = { value: unknown; escaped: boolean };

/** JSON.parse of one piece; a large container is split again. Undefined when a piece is not JSON. */
function parsePiece(
  bytes: Buffer,
  start: number,
  end: number,
  depth: number,
  splitFrom: number,
): Parsed | undefined {
  const first = bytes[start];
  if (end - start >= splitFrom && (first === OPEN_OBJECT || first === OPEN_ARRAY)) {
    const split = members(bytes, start, depth);
    if (!split || split.end !== end) return undefined;
    return assemble(bytes, split.members, depth, splitFrom);
  }
  const text = bytes.toString('utf8', start, end);
  try {
    return { value: JSON.parse(text), escaped: text.includes('\\u') };
  } catch {
    return undefined;
  }
}

function assemble(bytes: Buffer, m: Members, depth: number, splitFrom: number): Parsed | undefined {
  let escaped = false;
  const values: unknown[] = [];
  for (const [s, e] of m.values) {
    const piece = parsePiece(bytes, s, e, depth + 1, splitFrom);
    if (!piece) return undefined;
    escaped ||= piece.escaped;
    values.push(piece.value);
  }
  if (!m.keys) return { value: values, escaped };
  const object: Record<string, unknown> = {};
  for (const [i, [s, e]] of m.keys.entries()) {
    const text = bytes.toString('utf8', s, e);
    let key: unknown;
    try {
      key = JSON.parse(text);
    } catch {
      return undefined;
    }
    if (typeof key !== 'string') return undefined;
    escaped ||= text.includes('\\u');
    // JSON.parse makes `__proto__` an own property; an assignment would set the prototype
    if (key === '__proto__')
      Object.defineProperty(object, key, {
        value: values[i],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else object[key] = values[i];
  }
  return { value: object, escaped };
}

export type PiecesResult =
  | { kind: 'parsed'; value: unknown; depth: number; escaped: boolean }
  | { kind: 'too_deep'; depth: number };

/**
 * What `JSON.parse(bytes.toString())` returns, without ever holding the whole text as one string:
 * the top-level object or array is split at its own commas, each member parsed by itself (members
 * over the size limit split again), and the document put back together in order — duplicate keys
 * keep the last value, `__proto__` stays an own property. `depth` is the deepest nesting, as
 * `jsonDepth` counts it; `escaped` says whether any piece held a `\u` escape (then the caller's
 * storable scan applies). Undefined whenever the bytes are not plainly a UTF-8 JSON object or array
 * that parses: the caller then takes the whole-text path, which decides every error as before.
 */
export function parseJsonInPieces(
  bytes: Buffer,
  maxDepth: number,
  /** members at least this long are split again (tests split everything with 1) */
  splitFrom = PIECES_FROM_BYTES,
): PiecesResult | undefined {
  if (!isUtf8(bytes)) return undefined;
  const [start, end] = trimmed(bytes, 0, bytes.length);
  if (bytes[start] !== OPEN_OBJECT && bytes[start] !== OPEN_ARRAY) return undefined;
  const split = members(bytes, start, 1);
  if (!split || split.end !== end) return undefined;
  if (split.maxDepth > maxDepth) return { kind: 'too_deep', depth: split.maxDepth };
  const parsed = assemble(bytes, split.members, 1, splitFrom);
  if (!parsed) return undefined;
  return { kind: 'parsed', value: parsed.value, depth: split.maxDepth, escaped: parsed.escaped };
}
