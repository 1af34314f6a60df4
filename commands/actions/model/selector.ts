/**
 * An action step's CSS `selector` → a regular expression over `elements_chain` (RE2 syntax, no
 * lookaround, so ClickHouse's `match` runs it; JavaScript's RegExp reads it the same way).
 *
 * What it means is PostHog's (posthog/models/property/util.py `build_selector_regex`): the chain is
 * the clicked element first, then its ancestors; the selector's last compound matches any element
 * of the chain (a click inside a matching button counts), each compound before it an ancestor —
 * the next element for `>`, any later one for a space. A compound is a tag (or `*`), `#id`,
 * `.class`es, `[attr]` / `[attr=value]`, `:nth-child(n)` / `:nth-of-type(n)`. Written here for
 * this project's chain format (commands/capture/model/elementsChain.ts): classes sorted after the
 * tag, `:`, then `key="value"` pairs in en-US collation order.
 */
export type SelectorCompound = {
  tag: string | null;
  classes: string[];
  /** chain attribute key → value, or null for "present" */
  attributes: [string, string | null][];
  /** `>` before this compound (it is the parent of the one after it) */
  child: boolean;
};

export class SelectorError extends Error {}

// Keys the chain writes without the `attr__` prefix (PostHog's _UNPREFIXED_CHAIN_ATTRIBUTES).
const UNPREFIXED = new Set(['attr_id', 'href', 'text', 'nth-child', 'nth-of-type']);
const collator = new Intl.Collator('en-US');
const IDENT = '-?[_a-zA-Z\\u00a0-\\uffff][-_a-zA-Z0-9\\u00a0-\\uffff]*';
const TOKEN = new RegExp(
  `^(?:#(${IDENT})|\\.(${IDENT})|\\[\\s*([-_a-zA-Z0-9:]+)\\s*(?:=\\s*(?:"((?:\\\\.|[^"\\\\])*)"|'((?:\\\\.|[^'\\\\])*)'|([^\\]\\s"']+))\\s*)?\\]|:(nth-child|nth-of-type)\\((\\d+)\\))`,
);

function parseCompound(text: string, child: boolean): SelectorCompound {
  const tag = /^(\*|[a-zA-Z][-a-zA-Z0-9]*)/.exec(text)?.[1];
  const compound: SelectorCompound = { tag: null, classes: [], attributes: [], child };
  if (tag && tag !== '*') compound.tag = tag.toLowerCase();
  let rest = text.slice(tag?.length ?? 0);
  while (rest.length > 0) {
    const m = TOKEN.exec(rest);
    if (!m) throw new SelectorError(`selector: cannot read ${JSON.stringify(rest)}`);
    const [all, id, cls, key, dq, sq, bare, nth, n] = m;
    if (id !== undefined) compound.attributes.push(['attr_id', id]);
    else if (cls !== undefined) compound.classes.push(cls);
    else if (key !== undefined) {
      const value = dq ?? sq ?? bare ?? null;
      const chainKey = key === 'id' ? 'attr_id' : UNPREFIXED.has(key) ? key : `attr__${key}`;
      compound.attributes.push([chainKey, value === null ? null : value.replace(/\\"/g, '"')]);
    } else compound.attributes.push([nth!, n!]);
    rest = rest.slice(all.length);
  }
  compound.classes.sort();
  compound.attributes.sort(([a], [b]) => collator.compare(a, b));
  return compound;
}

/** The compounds, the clicked element's first (the order of the chain). */
export function parseSelector(selector: string): SelectorCompound[] {
  // `>` may touch its neighbours (`div>a`); spaces inside [...] or quotes are kept.
  const words: string[] = [];
  let word = '';
  let quote: string | null = null;
  let bracket = false;
  for (const ch of selector.trim()) {
    if (quote) {
      if (ch === quote) quote = null;
      word += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      word += ch;
    } else if (ch === '[' || ch === ']') {
      bracket = ch === '[';
      word += ch;
    } else if (!bracket && (ch === ' ' || ch === '>')) {
      if (word) words.push(word);
      if (ch === '>') words.push('>');
      word = '';
    } else word += ch;
  }
  if (word) words.push(word);
  if (words.length === 0) throw new SelectorError('selector: empty');
  const compounds: SelectorCompound[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w === '>') continue;
    const child = words[i + 1] === '>';
    compounds.push(parseCompound(w, child));
  }
  if (
    words.at(-1) === '>' ||
    words[0] === '>' ||
    words.some((w, i) => w === '>' && words[i + 1] === '>')
  )
    throw new SelectorError('selector: a > needs an element on each side');
  if (compounds.length > 20) throw new SelectorError('selector: at most 20 compounds');
  return compounds.reverse();
}

const esc = (s: string) => s.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
// One `key="value"` pair of an element; any element of the chain.
const PAIR = '[^;"=]*="(?:\\\\.|[^"\\\\])*"';
const ELEMENT = '(?:[^;"]|"(?:\\\\.|[^"\\\\])*")*';

function compoundRegex(c: SelectorCompound): string {
  let out = c.tag === null ? '[^.:;"]*' : esc(c.tag);
  for (const cls of c.classes) out += `(?:\\.[^.:;"]*)*?\\.${esc(cls)}`;
  out += '(?:\\.[^.:;"]*)*:';
  for (const [key, value] of c.attributes)
    out += `(?:${PAIR})*?${esc(key)}="${value === null ? '(?:\\\\.|[^"\\\\])*' : esc(value.replace(/"/g, '\\"'))}"`;
  return `${out}(?:${PAIR})*`;
}

/** The selector as one regular expression over the whole `elements_chain`. */
export function selectorChainRegex(selector: string): string {
  const [first, ...ancestors] = parseSelector(selector);
  let out = `(?:^|;)${compoundRegex(first!)}`;
  // an ancestor written with `>` after it is the very next element, otherwise any later one
  for (const c of ancestors)
    out += c.child ? `;${compoundRegex(c)}` : `;(?:${ELEMENT};)*${compoundRegex(c)}`;
  return `${out}(?:;|$)`;
}
