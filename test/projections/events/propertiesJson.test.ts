import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EventCaptured } from '../../../commands/capture/model/eventCaptured.ts';
import { propertiesJson } from '../../../projections/events/eventsRowBinary.ts';
import type { RecordedEvent } from '../../../src/core/event.ts';

const recorded = (data: Record<string, unknown>, dataText?: string) =>
  ({
    type: 'EventCaptured',
    id: '00000000-0000-4000-8000-000000000001',
    streamName: 'capture-1:x',
    revision: 0n,
    position: 1n,
    metadata: {},
    recordedAt: new Date(),
    data,
    ...(dataText === undefined ? {} : { dataText }),
  }) as unknown as RecordedEvent<EventCaptured>;

const captured = (properties: Record<string, unknown>) => ({
  uuid: '0192f0c4-7b1e-7d3a-9c4e-000000000001',
  projectId: 1,
  event: '$pageview',
  distinctId: 'u "1" },"timestamp":"',
  properties,
  timestamp: '2026-11-28T09:00:00.000Z',
  sentAt: null,
  receivedAt: '2026-11-28T09:00:00.000Z',
  elementsChain: '',
});

describe('propertiesJson: the properties text cut out of the log text', () => {
  it('equals JSON.stringify(properties) for any properties, nested objects named like the layout included', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue()),
        fc.jsonValue(),
        (properties, nested) => {
          const p = { ...properties, inner: { x: nested }, timestamp: '},"timestamp":"' };
          const data = captured(p);
          const cut = propertiesJson(recorded(data, JSON.stringify(data)));
          expect(cut).toBe(JSON.stringify(data.properties));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('serialises the properties when the text is absent or the data has another layout', () => {
    const data = captured({ a: { b: 1 }, timestamp: 'x', z: 1 });
    expect(propertiesJson(recorded(data))).toBe(JSON.stringify(data.properties));
    // timestamp before properties: a `},"timestamp":"` inside the properties must not be taken
    const { timestamp, ...rest } = data;
    const reordered = { timestamp, ...rest, after: { nested: true } };
    const text = JSON.stringify(reordered);
    expect(propertiesJson(recorded(reordered, text))).toBe(JSON.stringify(data.properties));
  });
});
