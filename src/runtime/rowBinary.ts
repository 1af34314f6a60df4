import { spareBuffers } from '../core/spareBuffers.ts';

/**
 * RowBinary for ClickHouse inserts (issue #27): values in the columns' binary layout, which
 * ClickHouse copies instead of parsing. Only values whose stored form is certain are written;
 * for the others the encoder gives up (NotExact) and the caller sends its text insert, so what is
 * stored never depends on which way a batch went.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** what capture writes: ISO 8601 UTC, up to microseconds */
const ISO_UTC = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?Z$/;
const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++)
  HEX['0123456789abcdef'.charCodeAt(i)] = HEX['0123456789ABCDEF'.charCodeAt(i)] = i;
/** where each byte of a UUID's text goes in RowBinary: two little-endian UInt64 halves */
const UUID_TEXT_AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

const { take, keep } = spareBuffers(4, 64 * 1024 * 1024);

/** A body and the way to hand its memory back once the insert is over (it is then reused). */
export type RowBinaryBody = Readonly<{ bytes: Buffer; release(): void }>;

/** Thrown inside the encoder when a value has no exact binary form: the batch goes as text. */
export class NotExact extends Error {}

/**
 * Appends RowBinary values to one growing Buffer. Each method writes what ClickHouse's text
 * parsers would have stored for the value, or throws NotExact when that is not certain (a time
 * `best_effort` reads some other way, a uuid in another spelling, a string with a lone surrogate).
 */
export class RowBinaryWriter {
  buf: Buffer;
  at = 0;
  constructor(size: number) {
    this.buf = take(size);
  }
  private room(bytes: number) {
    if (this.at + bytes <= this.buf.length) return;
    const bigger = take(Math.max(this.buf.length * 2, this.at + bytes));
    this.buf.copy(bigger, 0, 0, this.at);
    keep(this.buf);
    this.buf = bigger;
  }
  string(s: string) {
    // a lone surrogate would be written as U+FFFD here, while the text path keeps ClickHouse's reading
    if (!(s as unknown as { isWellFormed(): boolean }).isWellFormed()) throw new NotExact();
    const most = s.length * 3;
    this.room(most + 5);
    if (most < 128) {
      // the length fits one varint byte whatever the UTF-8 is: write the bytes, then their count
      const n = this.buf.write(s, this.at + 1);
      this.buf[this.at] = n;
      this.at += n + 1;
      return;
    }
    let n = Buffer.byteLength(s);
    while (n >= 0x80) {
      this.buf[this.at++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    this.buf[this.at++] = n;
    this.at += this.buf.write(s, this.at);
  }
  /** Int64 (and DateTime64) from a safe integer */
  int64(n: number) {
    if (!Number.isSafeInteger(n)) throw new NotExact();
    this.room(8);
    this.buf.writeUInt32LE(n >>> 0, this.at);
    this.buf.writeInt32LE(Math.floor(n / 4294967296), this.at + 4);
    this.at += 8;
  }
  uint64(n: bigint) {
    this.room(8);
    this.buf.writeBigUInt64LE(n, this.at);
    this.at += 8;
  }
  uint8(n: number) {
    this.room(1);
    this.buf[this.at++] = n;
  }
  uint32(n: number) {
    this.room(4);
    this.buf.writeUInt32LE(n, this.at);
    this.at += 4;
  }
  uuid(s: string) {
    if (!UUID.test(s)) throw new NotExact();
    this.room(16);
    // each half is a UInt64 written little-endian: its text's bytes in reverse
    for (let half = 0; half < 2; half++)
      for (let i = 0; i < 8; i++) {
        const p = UUID_TEXT_AT[half * 8 + 7 - i]!;
        this.buf[this.at++] = (HEX[s.charCodeAt(p)]! << 4) | HEX[s.charCodeAt(p + 1)]!;
      }
  }
  /** DateTime64(6): microseconds since the epoch, from ISO 8601 UTC text */
  dateTime64(s: string) {
    const m = ISO_UTC.exec(s);
    if (!m) throw new NotExact();
    const year = Number(m[1]);
    const ms = Date.UTC(
      year,
      Number(m[2]) - 1,
      Number(m[3]),
      Number(m[4]),
      Number(m[5]),
      Number(m[6]),
    );
    // years ClickHouse reads as written, and no day or hour that Date.UTC would carry over
    if (year < 1970 || year > 2105 || new Date(ms).toISOString().slice(0, 19) !== s.slice(0, 19))
      throw new NotExact();
    this.int64(ms * 1000 + Number((m[7] ?? '').padEnd(6, '0')));
  }
  body(): RowBinaryBody {
    const buf = this.buf;
    let released = false;
    return {
      bytes: buf.subarray(0, this.at),
      release: () => {
        if (!released) keep(buf);
        released = true;
      },
    };
  }
}

/**
 * `rows` as one RowBinary body (`bytesPerRow`: a first guess of the size), or null when a value
 * has no certain binary form: the caller sends the batch as text. The caller releases the body
 * once the insert has settled, and not before: its memory is then written again.
 */
export function encodeRowBinary<T>(
  rows: readonly T[],
  bytesPerRow: number,
  write: (w: RowBinaryWriter, row: T) => void,
): RowBinaryBody | null {
  const w = new RowBinaryWriter(Math.max(rows.length * bytesPerRow, 64));
  try {
    for (const row of rows) write(w, row);
  } catch (error) {
    w.body().release();
    if (error instanceof NotExact) return null;
    throw error;
  }
  return w.body();
}
