/**
 * lz-string's `compressToBase64` format, decoded with a budget. lz-string's own decoder builds
 * its whole output before returning, and a few hundred kilobytes of back-references can stand for
 * billions of characters (each code may name an entry one character longer than the last), so a
 * 280 KB body once took 4 GB and three minutes. This decoder counts what it produces and stops at
 * `maxChars`; its work is linear in input plus output. The format: base64 characters carry six
 * bits each, high bit first; values are read least significant bit first; codes 0 and 1 bring an
 * 8- or 16-bit literal, 2 ends the stream, and the code width grows as the dictionary does.
 */
export type Lz64Result =
  | { ok: true; text: string }
  | { ok: false; reason: 'malformed' | 'too_large' };

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=';
const VALUE = new Int8Array(128).fill(0);
for (let i = 0; i < ALPHABET.length; i++) VALUE[ALPHABET.charCodeAt(i)] = i;

const malformed: Lz64Result = { ok: false, reason: 'malformed' };
const tooLarge: Lz64Result = { ok: false, reason: 'too_large' };

export function decompressLz64(input: string, maxChars: number): Lz64Result {
  if (input.length === 0) return malformed;
  let index = 0;
  let current = valueAt(input, 0);
  let mask = 32;
  const read = (width: number): number => {
    let bits = 0;
    for (let p = 0; p < width; p++) {
      if (current & mask) bits |= 1 << p;
      mask >>= 1;
      if (mask === 0) {
        mask = 32;
        current = valueAt(input, ++index);
      }
    }
    return bits;
  };

  const first = read(2);
  if (first === 2) return malformed; // an empty stream: nothing to capture
  const dictionary: string[] = [];
  let dictSize = 4;
  let width = 3;
  let enlargeIn = 4;
  let w = String.fromCharCode(read(first === 0 ? 8 : 16));
  dictionary[3] = w;
  const out: string[] = [w];
  let produced = w.length;
  for (;;) {
    if (index >= input.length) return malformed; // ran out before the end code
    let code = read(width);
    if (code === 2) return { ok: true, text: out.join('') };
    if (code === 0 || code === 1) {
      dictionary[dictSize++] = String.fromCharCode(read(code === 0 ? 8 : 16));
      code = dictSize - 1;
      if (--enlargeIn === 0) {
        enlargeIn = 2 ** width;
        width++;
      }
    }
    const entry = code === dictSize ? w + w.charAt(0) : dictionary[code];
    if (entry === undefined) return malformed;
    produced += entry.length;
    if (produced > maxChars) return tooLarge;
    out.push(entry);
    dictionary[dictSize++] = w + entry.charAt(0);
    w = entry;
    if (--enlargeIn === 0) {
      enlargeIn = 2 ** width;
      width++;
    }
  }
}

/** A character outside the alphabet reads as zero bits, as in lz-string. */
const valueAt = (input: string, i: number): number => {
  const c = input.charCodeAt(i);
  return c < 128 ? (VALUE[c] ?? 0) : 0;
};
