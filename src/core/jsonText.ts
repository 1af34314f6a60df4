/**
 * JSON text written once for an object that nobody changes afterwards. A captured event's
 * properties are serialised for the log and again, as the same text, for ClickHouse's
 * `properties` column; remembering the first text saves the second (≈ 10 µs a posthog-js event).
 * Held weakly: the text goes with its object.
 */
const texts = new WeakMap<object, string>();

/** Remembers `text` as the JSON of `value`; the caller promises not to change `value` after this. */
export function rememberJsonText<T extends object>(value: T, text: string): T {
  texts.set(value, text);
  return value;
}

/** `JSON.stringify(value)`, from memory when the object's text was remembered. */
export function jsonText(value: object): string {
  return texts.get(value) ?? JSON.stringify(value);
}

/**
 * `JSON.stringify(value)` of a plain object whose members may have remembered texts: the members
 * are written in the object's key order, each from memory or stringified, and members that JSON
 * leaves out (undefined, functions, symbols) are left out.
 */
export function composeJsonText(value: Readonly<Record<string, unknown>>): string {
  let out = '{';
  for (const key of Object.keys(value)) {
    const member = value[key];
    const text =
      typeof member === 'object' && member !== null
        ? jsonText(member)
        : (JSON.stringify(member) as string | undefined);
    if (text === undefined) continue;
    out += `${out.length > 1 ? ',' : ''}${JSON.stringify(key)}:${text}`;
  }
  return `${out}}`;
}
