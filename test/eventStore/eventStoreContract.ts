import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { EventToAppend, RecordedEvent } from '../../src/core/event.ts';
import { type EventStore, WrongExpectedRevisionError } from '../../src/eventStore/eventStore.ts';

const ev = (type: string, n: number, id?: string): EventToAppend => ({
  type,
  data: { n },
  metadata: { occurredAt: new Date().toISOString(), projectId: 1 },
  ...(id ? { id } : {}),
});

const waitUntil = async (cond: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
};

/**
 * One behaviour for every adapter. Streams get unique names per test, so the suite also runs
 * against a shared, non-empty EventStoreDB.
 */
export function eventStoreContract(name: string, open: () => Promise<EventStore>) {
  describe(`event store contract: ${name}`, () => {
    const stream = (category = 'contract') => `${category}-${randomUUID()}`;

    it('appends to a new stream with no_stream and reads it forwards with 0-based revisions', async () => {
      const store = await open();
      const s = stream();
      const before = Date.now();
      const result = await store.appendToStream(s, [ev('A', 1), ev('B', 2)], {
        expectedRevision: 'no_stream',
      });
      expect(result.nextExpectedRevision).toBe(1n);
      const events = await store.readStream(s);
      expect(events.map((e) => [e.type, e.data, e.revision, e.streamName])).toEqual([
        ['A', { n: 1 }, 0n, s],
        ['B', { n: 2 }, 1n, s],
      ]);
      expect(events[1]!.position).toBe(result.position);
      expect(events[0]!.position < events[1]!.position).toBe(true);
      expect(events[0]!.metadata).toMatchObject({ projectId: 1 });
      expect(events[0]!.recordedAt).toBeInstanceOf(Date);
      // the commit time, to the millisecond (clock skew between the store and us allowed for)
      const at = events[0]!.recordedAt.getTime();
      expect(Math.abs(at - before)).toBeLessThan(60_000);
      expect(events[1]!.recordedAt.getTime()).toBeGreaterThanOrEqual(at);
    });

    // One event and larger appends of the same (on Postgres every value escaped in one COPY).
    it.each([
      [1, 'no_stream'],
      [150, 'no_stream'],
      [150, 'any'],
    ] as const)(
      'keeps tabs, newlines, backslashes and quotes in names and data exactly as given (%i events, %s)',
      async (count, expectedRevision) => {
        const store = await open();
        const s = `${stream()}\tline\nbreak\r\\back"quote'apostrophe`;
        const data = (n: number) => ({
          n,
          text: 'a\tb\nc\rd\\e"f\'g',
          nested: { 'key\\with\ttab': ['\\n', '\u2028', 'é'] },
        });
        const metadata = { projectId: 1, occurredAt: new Date().toISOString() };
        const events = Array.from({ length: count }, (_, n) => ({
          type: "Odd\\Type'",
          data: data(n),
          metadata,
        }));
        await store.appendToStream(s, events, { expectedRevision });
        const read = await store.readStream(s);
        expect(read.map((e) => [e.streamName, e.type, e.data])).toEqual(
          events.map((e) => [s, e.type, e.data]),
        );
      },
    );

    it('refuses no_stream on an existing stream and a stale exact revision', async () => {
      const store = await open();
      const s = stream();
      await store.appendToStream(s, [ev('A', 1)], { expectedRevision: 'no_stream' });
      await expect(
        store.appendToStream(s, [ev('A', 2)], { expectedRevision: 'no_stream' }),
      ).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      await expect(
        store.appendToStream(s, [ev('A', 2)], { expectedRevision: 5n }),
      ).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      const ok = await store.appendToStream(s, [ev('A', 2)], { expectedRevision: 0n });
      expect(ok.nextExpectedRevision).toBe(1n);
      expect((await store.readStream(s)).length).toBe(2);
    });

    it('honours stream_exists and any', async () => {
      const store = await open();
      const s = stream();
      await expect(
        store.appendToStream(s, [ev('A', 1)], { expectedRevision: 'stream_exists' }),
      ).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      await store.appendToStream(s, [ev('A', 1)], { expectedRevision: 'any' });
      const r = await store.appendToStream(s, [ev('A', 2)], { expectedRevision: 'stream_exists' });
      expect(r.nextExpectedRevision).toBe(1n);
    });

    it('lets exactly one of two concurrent writers with the same expected revision win', async () => {
      const store = await open();
      const s = stream();
      await store.appendToStream(s, [ev('A', 0)], { expectedRevision: 'no_stream' });
      const results = await Promise.allSettled([
        store.appendToStream(s, [ev('A', 1)], { expectedRevision: 0n }),
        store.appendToStream(s, [ev('A', 2)], { expectedRevision: 0n }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
      expect((await store.readStream(s)).length).toBe(2);
    });

    it('reads an absent stream as empty, and reads backwards and from a revision', async () => {
      const store = await open();
      expect(await store.readStream(stream())).toEqual([]);
      const s = stream();
      await store.appendToStream(
        s,
        [1, 2, 3, 4].map((n) => ev('A', n)),
        { expectedRevision: 'no_stream' },
      );
      expect((await store.readStream(s, { fromRevision: 2n })).map((e) => e.data)).toEqual([
        { n: 3 },
        { n: 4 },
      ]);
      expect(
        (await store.readStream(s, { direction: 'backwards', maxCount: 2 })).map((e) => e.data),
      ).toEqual([{ n: 4 }, { n: 3 }]);
    });

    it('treats re-appending an event id as a no-op (idempotent retries)', async () => {
      const store = await open();
      const s = stream();
      const id = randomUUID();
      const first = await store.appendToStream(s, [ev('A', 1, id)], { expectedRevision: 'any' });
      const again = await store.appendToStream(s, [ev('A', 1, id)], { expectedRevision: 'any' });
      expect(again.position).toBe(first.position);
      expect((await store.readStream(s)).length).toBe(1);
    });

    it('reads all from an exclusive position, filtered by stream prefix or event type, in both directions', async () => {
      const store = await open();
      const cat = `c${randomUUID().replace(/-/g, '').slice(0, 10)}`;
      const start = await store.headPosition();
      await store.appendToStream(stream(cat), [ev('X1', 1), ev('X2', 2)], {
        expectedRevision: 'no_stream',
      });
      await store.appendToStream(stream('other'), [ev('X1', 3)], { expectedRevision: 'no_stream' });
      const after = await store.readAll({ after: start < 0n ? 'start' : start });
      expect(after.slice(0, 3).map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
      const byPrefix = await store.readAll({
        after: start < 0n ? 'start' : start,
        filter: { streamPrefixes: [`${cat}-`] },
      });
      expect(byPrefix.map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }]);
      const byType = await store.readAll({
        after: byPrefix[0]!.position,
        filter: { eventTypes: ['X1'] },
      });
      expect(byType.map((e) => e.data)).toContainEqual({ n: 3 });
      expect(byType.map((e) => e.data)).not.toContainEqual({ n: 1 });
      const back = await store.readAll({ direction: 'backwards', maxCount: 3 });
      expect(back.map((e) => e.data)).toEqual([{ n: 3 }, { n: 2 }, { n: 1 }]);
      expect(await store.headPosition()).toBe(back[0]!.position);
    });

    it('reads all filtered by several event types in log order, paged, forwards and backwards', async () => {
      const store = await open();
      const tag = randomUUID().slice(0, 8);
      const [a, b, c] = [`A${tag}`, `B${tag}`, `C${tag}`];
      const start = await store.headPosition();
      // interleaved: A B C A A B C B A …, one stream each, so order across types is the log's
      const types = [a, b, c, a, a, b, c, b, a, c, b, a];
      for (const [n, t] of types.entries())
        await store.appendToStream(stream(t), [ev(t, n)], { expectedRevision: 'no_stream' });
      const filter = { eventTypes: [a, b] };
      const expected = types.flatMap((t, n) => (t === c ? [] : [n]));
      const pages: number[][] = [];
      let after: bigint | 'start' = start < 0n ? 'start' : start;
      for (;;) {
        const page = await store.readAll({ after, maxCount: 3, filter });
        if (page.length === 0) break;
        pages.push(page.map((e) => (e.data as { n: number }).n));
        after = page[page.length - 1]!.position;
      }
      expect(pages.flat()).toEqual(expected);
      expect(pages.slice(0, -1).every((p) => p.length === 3)).toBe(true);
      const back = await store.readAll({ direction: 'backwards', maxCount: 4, filter });
      expect(back.map((e) => (e.data as { n: number }).n)).toEqual(expected.slice(-4).reverse());
      const before = await store.readAll({
        direction: 'backwards',
        before: back[3]!.position,
        maxCount: 2,
        filter,
      });
      expect(before.map((e) => (e.data as { n: number }).n)).toEqual(
        expected.slice(-6, -4).reverse(),
      );
    });

    it('reads positioned events as readAll reads them: type, data and position', async () => {
      const store = await open();
      const tag = randomUUID().slice(0, 8);
      const start = await store.headPosition();
      const text = {
        s: 'é 😀 \u2028 \ud800 "q" \\',
        numbers: [1e21, -0.5],
        nested: { deep: [null, true] },
      };
      for (const [n, t] of [`A${tag}`, `B${tag}`, `A${tag}`, `C${tag}`, `A${tag}`].entries())
        await store.appendToStream(stream(t), [{ ...ev(t, n), data: { n, ...text } }], {
          expectedRevision: 'no_stream',
        });
      for (const options of [
        {
          after: start < 0n ? ('start' as const) : start,
          filter: { eventTypes: [`A${tag}`, `C${tag}`] },
        },
        {
          after: start < 0n ? ('start' as const) : start,
          maxCount: 2,
          filter: { eventTypes: [`A${tag}`] },
        },
        {
          direction: 'backwards' as const,
          maxCount: 3,
          filter: { eventTypes: [`B${tag}`, `C${tag}`] },
        },
      ]) {
        const all = await store.readAll(options);
        const positioned = await store.readPositioned(options);
        expect(all.length).toBeGreaterThan(0);
        expect(positioned).toEqual(
          all.map(({ type, data, position }) => ({ type, data, position })),
        );
      }
    });

    it('subscribes to all: catches up from a checkpoint, then delivers live events in order, exactly once', async () => {
      const store = await open();
      const cat = `s${randomUUID().replace(/-/g, '').slice(0, 10)}`;
      const s = stream(cat);
      await store.appendToStream(s, [ev('A', 1), ev('A', 2)], { expectedRevision: 'no_stream' });
      const first = (await store.readStream(s))[0]!;
      const seen: RecordedEvent[] = [];
      let caughtUp = false;
      const sub = store.subscribeToAll((e) => void seen.push(e), {
        after: first.position,
        filter: { streamPrefixes: [`${cat}-`] },
        onCaughtUp: () => (caughtUp = true),
      });
      await waitUntil(() => caughtUp && seen.length === 1);
      await store.appendToStream(s, [ev('A', 3)], { expectedRevision: 1n });
      await store.appendToStream(stream(cat), [ev('A', 4)], { expectedRevision: 'no_stream' });
      await waitUntil(() => seen.length === 3);
      await sub.stop();
      expect(seen.map((e) => e.data)).toEqual([{ n: 2 }, { n: 3 }, { n: 4 }]);
    });
  });
}

export function appendManyContract(name: string, open: () => Promise<EventStore>) {
  describe(`appendMany contract: ${name}`, () => {
    it('appends to several streams in one call, checking each expected revision', async () => {
      const store = await open();
      const a = `many-${randomUUID()}`;
      const b = `many-${randomUUID()}`;
      const results = await store.appendMany([
        { streamName: a, events: [ev('A', 1), ev('A', 2)], expectedRevision: 'no_stream' },
        { streamName: b, events: [ev('B', 1)], expectedRevision: 'any' },
        { streamName: a, events: [ev('A', 3)], expectedRevision: 1n },
      ]);
      expect(results.map((r) => r.nextExpectedRevision)).toEqual([1n, 0n, 2n]);
      expect((await store.readStream(a)).map((e) => e.data)).toEqual([
        { n: 1 },
        { n: 2 },
        { n: 3 },
      ]);
      await expect(
        store.appendMany([{ streamName: b, events: [ev('B', 2)], expectedRevision: 'no_stream' }]),
      ).rejects.toBeInstanceOf(WrongExpectedRevisionError);
    });

    it('continues each stream after its head and numbers the log in call order with any', async () => {
      const store = await open();
      const a = `many-${randomUUID()}`;
      const b = `many-${randomUUID()}`;
      await store.appendMany([
        { streamName: a, events: [ev('A', 0), ev('A', 1)], expectedRevision: 'any' },
      ]);
      const results = await store.appendMany([
        { streamName: a, events: [ev('A', 2), ev('A', 3)], expectedRevision: 'any' },
        { streamName: b, events: [ev('B', 0)], expectedRevision: 'any' },
        { streamName: a, events: [ev('A', 4)], expectedRevision: 'any' },
      ]);
      expect(results.map((r) => r.nextExpectedRevision)).toEqual([3n, 0n, 4n]);
      const readA = await store.readStream(a);
      expect(readA.map((e) => [e.revision, e.data])).toEqual(
        [0, 1, 2, 3, 4].map((n) => [BigInt(n), { n }]),
      );
      const byId = new Map([...readA, ...(await store.readStream(b))].map((e) => [e.id, e]));
      const appended = results.flatMap((r) => r.appended);
      expect(appended.map((e) => byId.get(e.id)!.data)).toEqual([
        { n: 2 },
        { n: 3 },
        { n: 0 },
        { n: 4 },
      ]);
      for (const e of appended) {
        expect(e.position).toBe(byId.get(e.id)!.position);
        expect(e.revision).toBe(byId.get(e.id)!.revision);
      }
      // the events take increasing positions in the order of the call
      const positions = appended.map((e) => e.position);
      expect([...positions].sort((x, y) => (x < y ? -1 : 1))).toEqual(positions);
      expect(new Set(positions).size).toBe(4);
    });

    it('skips event ids already in the log or repeated in the same call', async () => {
      const store = await open();
      const s = `many-${randomUUID()}`;
      const id = randomUUID();
      await store.appendMany([
        { streamName: s, events: [ev('A', 1, id)], expectedRevision: 'any' },
      ]);
      const again = await store.appendMany([
        { streamName: s, events: [ev('A', 1, id), ev('A', 2)], expectedRevision: 'any' },
        { streamName: s, events: [ev('A', 2, id)], expectedRevision: 'any' },
      ]);
      expect((await store.readStream(s)).map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }]);
      expect(again[1]!.nextExpectedRevision).toBe(0n);
      const twice = randomUUID();
      await store.appendMany([
        { streamName: s, events: [ev('A', 3, twice), ev('A', 3, twice)], expectedRevision: 'any' },
      ]);
      expect((await store.readStream(s)).map((e) => e.data)).toEqual([
        { n: 1 },
        { n: 2 },
        { n: 3 },
      ]);
    });
  });
}
