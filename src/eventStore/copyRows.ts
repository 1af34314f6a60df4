import { finished } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { spareBuffers } from '../core/spareBuffers.ts';

/**
 * COPY's text format: a row a line, tab-separated; a backslash, tab, newline or carriage return
 * inside a value is written as its escape. Values are text already (JSON documents, uuids, names).
 */
const SPECIAL = /[\\\t\n\r]/;
const SPECIALS = /[\\\t\n\r]/g;
const ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\\\',
  '\t': '\\t',
  '\n': '\\n',
  '\r': '\\r',
};

const buffers = spareBuffers(4, 64 * 1024 * 1024);

/**
 * Rows of COPY text encoded straight into one growing buffer: no escaped copy of a value, no line
 * string, no string of the whole batch. An event's JSON is ≈ 4 KB, and its escaped copy, its line
 * and their UTF-8 measure were ≈ 10 KB of garbage an event on the capture path (docs/PERFORMANCE.md
 * "Issue #27, fourth part"); a string over 128 KB would also go to V8's large-object space. The
 * buffer is a kept one (`release` hands it back once the COPY is over).
 */
export class CopyRows {
  private buffer: Buffer;
  private at = 0;
  rows = 0;

  constructor(sizeHint = 64 * 1024) {
    this.buffer = buffers.take(Math.max(sizeHint, 1024));
  }

  /** One row: the values tab-separated, each escaped as COPY's text format wants. */
  row(values: readonly string[]): this {
    for (let i = 0; i < values.length; i++) {
      if (i > 0) this.byte(0x09);
      this.value(values[i]!);
    }
    this.byte(0x0a);
    this.rows++;
    return this;
  }

  /** The rows written so far (a view of the buffer, not a copy). */
  bytes(): Buffer {
    return this.buffer.subarray(0, this.at);
  }

  /** Hands the buffer back for the next rows: nothing may read `bytes()` afterwards. */
  release(): void {
    buffers.keep(this.buffer);
    this.buffer = Buffer.alloc(0);
    this.at = 0;
  }

  private value(text: string): void {
    // UTF-8 takes at most 3 bytes a UTF-16 unit, an escape 2: room for the worst case
    this.reserve(text.length * 3);
    if (!SPECIAL.test(text)) {
      this.at += this.buffer.write(text, this.at, 'utf8');
      return;
    }
    let from = 0;
    SPECIALS.lastIndex = 0;
    for (let m = SPECIALS.exec(text); m !== null; m = SPECIALS.exec(text)) {
      if (m.index > from) this.at += this.buffer.write(text.slice(from, m.index), this.at, 'utf8');
      this.at += this.buffer.write(ESCAPES[m[0]]!, this.at, 'latin1');
      from = m.index + 1;
    }
    if (from < text.length) this.at += this.buffer.write(text.slice(from), this.at, 'utf8');
  }

  private byte(b: number): void {
    this.reserve(1);
    this.buffer[this.at++] = b;
  }

  private reserve(n: number): void {
    if (this.at + n <= this.buffer.length) return;
    const grown = buffers.take(Math.max(this.buffer.length * 2, this.at + n));
    this.buffer.copy(grown, 0, 0, this.at);
    buffers.keep(this.buffer);
    this.buffer = grown;
  }
}

/**
 * Writes the rows into `table (columns)` with COPY FROM STDIN on this client, so inside its
 * transaction. Postgres parses COPY text far quicker than a JSON document of rows
 * (docs/PERFORMANCE.md, "COPY into the log").
 */
export async function copyInto(
  client: pg.PoolClient,
  table: string,
  columns: readonly string[],
  rows: CopyRows,
): Promise<void> {
  const stream = client.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN`));
  stream.end(rows.bytes());
  try {
    await finished(stream);
  } finally {
    // the COPY is over (done or failed): the connection no longer reads the bytes
    rows.release();
  }
}
