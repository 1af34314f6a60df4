/**
 * Small request bodies that expand without bound when decoded: what an attacker sends.
 */

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/**
 * An lz-string (`compressToBase64`) stream of `codes` back-references, each one character longer
 * than the last ("aa", "aaa", …): `codes` codes decode to about codes²/2 characters. 100,000 codes
 * are ≈ 280 KB of base64 and decode to 5 × 10⁹ characters. Built bit by bit in lz-string's format
 * (values LSB first, six bits per base64 character, high bit first), since compressing such a
 * string is impossible.
 */
export function lz64Bomb(codes: number): string {
  const bits: number[] = [];
  const write = (value: number, n: number) => {
    for (let i = 0; i < n; i++) bits.push((value >> i) & 1);
  };
  write(0, 2); // an 8-bit literal follows
  write('a'.charCodeAt(0), 8);
  let numBits = 3;
  let enlargeIn = 4;
  let next = 4; // the dictionary size: each code names the entry it is about to create
  for (let i = 0; i < codes; i++) {
    write(next++, numBits);
    if (--enlargeIn === 0) {
      enlargeIn = 2 ** numBits;
      numBits++;
    }
  }
  write(2, numBits); // end of stream
  let out = '';
  for (let i = 0; i < bits.length; i += 6) {
    let v = 0;
    for (let j = 0; j < 6; j++) v = (v << 1) | (bits[i + j] ?? 0);
    out += BASE64[v];
  }
  return out;
}
