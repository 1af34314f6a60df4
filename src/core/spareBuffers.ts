/**
 * Buffers kept for the next body of the same kind: memory written for the first time costs its
 * page faults, which were most of an encoding's cost (a 1.2 KB ClickHouse row: ≈ 6–7 µs into fresh
 * memory, 0.3 µs into a used buffer; docs/PERFORMANCE.md "ClickHouse insert formats"), and a
 * growing buffer faults in every size it passes through.
 */
export function spareBuffers(count: number, maxBytes: number) {
  const spare: Buffer[] = [];
  return {
    /** a buffer of at least `size` bytes, a kept one when one is large enough */
    take(size: number): Buffer {
      const i = spare.findIndex((b) => b.length >= size);
      return i >= 0 ? spare.splice(i, 1)[0]! : Buffer.allocUnsafe(size);
    },
    /** hands a buffer back once nothing reads it any more (its memory is written again) */
    keep(buffer: Buffer): void {
      if (buffer.length <= maxBytes && spare.length < count) spare.push(buffer);
    },
  };
}
