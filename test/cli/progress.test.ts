import { describe, expect, it } from 'vitest';
import { progressReporter } from '../../src/cli/progress.ts';

/** A terminal as cli-progress drives it: what it wrote, cursor moves dropped. */
function fakeTerminal() {
  const written: string[] = [];
  const stream = {
    isTTY: true,
    columns: 200,
    write: (chunk: string) => {
      written.push(chunk);
      return true;
    },
    cursorTo: () => true,
    moveCursor: () => true,
    clearLine: () => true,
    clearScreenDown: () => true,
    on: () => stream,
    removeListener: () => stream,
  };
  return { stream: stream as unknown as NodeJS.WriteStream, text: () => written.join('') };
}

describe('rebuild progress on a terminal', () => {
  it('shows "ETA –" while the rate is unknown, never cli-progress\'s "ETA LL"', () => {
    const terminal = fakeTerminal();
    const progress = progressReporter(terminal.stream);
    progress.update('persons', 0n, 1_000n);
    progress.stop();
    expect(terminal.text()).toMatch(/persons \[.*\] 0\/1000 positions \| 0 events\/s \| ETA –/);
    expect(terminal.text()).not.toContain('LL');
  });
});
