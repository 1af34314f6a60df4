/**
 * Autocapture elements (capture.md §3.1 step 9, §4.2).
 *
 * - `elementsToChain`: posthog-js `$elements` array → `elements_chain` string, as PostHog's ingestion
 *   does it (nodejs `extractElements` + `elementsToString`): closest element first; tag name; `.class`
 *   for each class of `attr__class` (split on single spaces, sorted, `"` removed); `:`; then
 *   `key="value"` for text (`$el_text`, ≤ 400 UTF-16 units), nth-child / nth-of-type (0 when missing),
 *   href (`attr__href`, ≤ 2048), attr_id (`attr__id`) and every raw `attr__*` key, keys sorted with
 *   `localeCompare` (en-US collation), `"` in keys and values escaped as `\"`; elements joined by `;`.
 * - `chainToElements`: `elements_chain` → the REST `elements` array, as Django's `chain_to_element_dicts`
 *   (regex parsing; values keep their `\"` escapes, as PostHog's do).
 */

/** One item of the REST events API `elements` array. */
export type ElementView = {
  event: null;
  text: string | null;
  tag_name: string | null;
  attr_class: string[] | null;
  href: string | null;
  attr_id: string | null;
  nth_child: number | null;
  nth_of_type: number | null;
  attributes: Record<string, string>;
  order: number;
};

const MAX_TEXT = 400;
const MAX_HREF = 2048;

// Node's default `localeCompare` locale; a fixed collator keeps the output independent of the host.
const collator = new Intl.Collator('en-US');

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const escapeQuotes = (value: string) => value.replace(/"/g, '\\"');

/** The element model between `$elements` and the chain (PostHog's `Element`). */
export type ChainElement = {
  text?: string;
  tag_name?: string;
  href?: string;
  attr_class?: string[];
  attr_id?: unknown;
  nth_child?: unknown;
  nth_of_type?: unknown;
  attributes?: Record<string, unknown>;
};

/** nodejs `extractAttrClass`: falsy → none, array → as is, otherwise split on single spaces. */
function classesOf(value: unknown): string[] | undefined {
  if (!value) return undefined;
  if (Array.isArray(value)) return value.map(String);
  return String(value).split(' ');
}

/** nodejs `extractElements`: raw autocapture objects → element model (entries that are not objects are skipped). */
export function extractElements(elements: readonly unknown[]): ChainElement[] {
  return elements.filter(isRecord).map((el) => ({
    text: el.$el_text ? String(el.$el_text).slice(0, MAX_TEXT) : undefined,
    tag_name: typeof el.tag_name === 'string' ? el.tag_name : undefined,
    href: el.attr__href ? String(el.attr__href).slice(0, MAX_HREF) : undefined,
    attr_class: classesOf(el.attr__class),
    attr_id: el.attr__id,
    nth_child: el.nth_child,
    nth_of_type: el.nth_of_type,
    attributes: Object.fromEntries(Object.entries(el).filter(([key]) => key.startsWith('attr__'))),
  }));
}

function elementToString(element: ChainElement): string {
  let out = element.tag_name ?? '';
  // JS default sort, as PostHog's `attr_class.sort()` (on a copy: the input is not changed)
  for (const cls of [...(element.attr_class ?? [])].sort()) out += `.${cls.replace(/"/g, '')}`;
  const attributes: Record<string, unknown> = {
    ...(element.text ? { text: element.text } : {}),
    'nth-child': element.nth_child ?? 0,
    'nth-of-type': element.nth_of_type ?? 0,
    ...(element.href ? { href: element.href } : {}),
    ...(element.attr_id ? { attr_id: element.attr_id } : {}),
    ...element.attributes,
  };
  out += ':';
  out += Object.keys(attributes)
    .sort(collator.compare)
    .map((key) => `${escapeQuotes(key)}="${escapeQuotes(String(attributes[key]))}"`)
    .join('');
  return out;
}

/** nodejs `elementsToString`: element model → chain. */
export function elementsToString(elements: readonly ChainElement[]): string {
  return elements.map(elementToString).join(';');
}

/**
 * `$elements` (array of element objects from autocapture, closest first) → `elements_chain`.
 * Anything but a non-empty array gives ''. Entries that are not objects are skipped. Non-string values
 * are rendered with `String()` (PostHog's `toString()`; it would fail on null and drop the chain).
 */
export function elementsToChain(elements: unknown): string {
  if (!Array.isArray(elements) || elements.length === 0) return '';
  return elementsToString(extractElements(elements));
}

/** The event's elements chain: a non-empty `$elements_chain` as sent, else `$elements` converted. */
export function elementsChainOf(properties: Record<string, unknown>): string {
  const chain = properties.$elements_chain;
  return typeof chain === 'string' && chain !== '' ? chain : elementsToChain(properties.$elements);
}

// Python's str.isspace() set: the split regex of Django's parser treats these as separators.
const WS = '\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
// One element: runs of non-separator characters or quoted strings (which may hold `;` and `\"`).
// Python's `.` does not match "\n"; `[^\n]` keeps that.
const SPLIT_CHAIN = new RegExp(`(?:[^${WS};"]|"(?:\\\\[^\\n]|[^"])*")+`, 'g');
// Tag and classes, then `:` and the attributes (a class may contain `:`, an attribute key may not).
const SPLIT_CLASS_ATTRIBUTES = /([^\n]*?)($|:([a-zA-Z\-_0-9]*=[^\n]*))/;
const PARSE_ATTRIBUTES = /([^\n]*?)="((?:[^"\\]|\\[^\n])*)"/g;

/** Python `int()` on a chain value: surrounding whitespace allowed, otherwise digits only. */
function intOrNull(value: string): number | null {
  return /^\s*[+-]?\d+\s*$/.test(value) ? Number.parseInt(value, 10) : null;
}

function parseElement(elString: string, order: number): ElementView {
  const element: ElementView = {
    event: null,
    text: null,
    tag_name: null,
    attr_class: null,
    href: null,
    attr_id: null,
    nth_child: null,
    nth_of_type: null,
    attributes: {},
    order,
  };
  const match = SPLIT_CLASS_ATTRIBUTES.exec(elString);
  const tagPart = match?.[1] ?? '';
  const attrsPart = match?.[3] ?? '';

  if (tagPart) {
    const dot = tagPart.indexOf('.');
    element.tag_name = dot === -1 ? tagPart : tagPart.slice(0, dot);
    if (dot !== -1)
      element.attr_class = tagPart
        .slice(dot + 1)
        .split('.')
        .filter((cls) => cls !== '');
  }
  for (const attribute of attrsPart.matchAll(PARSE_ATTRIBUTES)) {
    const key = attribute[1]!;
    const value = attribute[2]!;
    if (key === 'href') element.href = value;
    else if (key === 'nth-child') element.nth_child = intOrNull(value);
    else if (key === 'nth-of-type') element.nth_of_type = intOrNull(value);
    else if (key === 'text') element.text = value;
    else if (key === 'attr_id') element.attr_id = value;
    else if (key) element.attributes[key] = value;
  }
  return element;
}

/** `elements_chain` → REST `elements` (order = position in the chain, 0 = the clicked element). */
export function chainToElements(chain: string): ElementView[] {
  if (typeof chain !== 'string' || chain === '') return [];
  return Array.from(chain.matchAll(SPLIT_CHAIN), (m, index) => parseElement(m[0], index));
}
