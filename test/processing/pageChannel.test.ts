import { describe, expect, it } from 'vitest';
import { pageChannel } from '../../src/processing/pageChannel.ts';

describe('pageChannel', () => {
  it('hands pages over in order and holds the producer at its capacity', async () => {
    const channel = pageChannel<number>(2);
    let pushed = 0;
    const producer = (async () => {
      for (let i = 1; i <= 5; i++) {
        await channel.push(i);
        pushed = i;
      }
      channel.end();
    })();
    await new Promise((r) => setTimeout(r, 10));
    expect(pushed).toBe(2); // nothing consumed yet: the third push waits
    const got: number[] = [];
    for await (const page of channel) got.push(page);
    await producer;
    expect(got).toEqual([1, 2, 3, 4, 5]);
  });

  it("fails the consumer with the producer's error, after the pages before it", async () => {
    const channel = pageChannel<number>(2);
    await channel.push(1);
    channel.end(new Error('chDB went away'));
    const got: number[] = [];
    await expect(
      (async () => {
        for await (const page of channel) got.push(page);
      })(),
    ).rejects.toThrow('chDB went away');
    expect(got).toEqual([1]);
  });

  it("fails a waiting producer with the consumer's reason", async () => {
    const channel = pageChannel<number>(1);
    await channel.push(1);
    const waiting = channel.push(2);
    channel.abandon(new Error('the fold failed'));
    await expect(waiting).rejects.toThrow('the fold failed');
    await expect(channel.push(3)).rejects.toThrow('the fold failed');
  });
});
