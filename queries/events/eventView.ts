/**
 * The REST event object (capture.md §4.2) and the CSV renderings of events and select results.
 */
import { stringify } from 'csv-stringify/sync';
import { z } from 'zod';
import { chainToElements } from '../../commands/capture/model/elementsChain.ts';
import { type EventRow, formatTimestamp } from '../../projections/events/eventsReader.ts';
import { csvCast } from '../shared/csvCells.ts';

export const ElementView = z
  .object({
    event: z.null(),
    text: z.string().nullable(),
    tag_name: z.string().nullable(),
    attr_class: z.array(z.string()).nullable(),
    href: z.string().nullable(),
    attr_id: z.string().nullable(),
    nth_child: z.number().int().nullable(),
    nth_of_type: z.number().int().nullable(),
    attributes: z.record(z.string(), z.string()),
    order: z.number().int(),
  })
  .meta({ id: 'EventElement' });

export const EventView = z
  .object({
    id: z.string().describe('event UUID'),
    distinct_id: z.string(),
    properties: z.record(z.string(), z.unknown()),
    event: z.string(),
    timestamp: z.string().describe('ISO 8601 with offset, e.g. 2023-09-15T09:15:02.325000+00:00'),
    person: z
      .object({
        is_identified: z.boolean(),
        distinct_ids: z.array(z.string()),
        properties: z.record(z.string(), z.unknown()),
      })
      .nullable()
      .describe('the person of the distinct id, or null when it has none'),
    elements: z.array(ElementView),
    elements_chain: z.string(),
  })
  .meta({ id: 'Event' });
export type EventView = z.infer<typeof EventView>;

function parseProperties(json: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(json);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

export function toEventView(row: EventRow): EventView {
  return {
    id: row._id,
    distinct_id: row._distinct_id,
    properties: parseProperties(row._properties),
    event: row._event,
    timestamp: formatTimestamp(row._ts),
    person: null,
    elements: chainToElements(row._elements_chain),
    elements_chain: row._elements_chain,
  };
}

/** Nested objects and arrays become dotted columns (`properties.$browser`, `elements.0.tag_name`). */
function flatten(value: unknown, prefix: string, out: Record<string, unknown>): void {
  if (Array.isArray(value) || (typeof value === 'object' && value !== null)) {
    const entries = Object.entries(value);
    if (entries.length === 0 && prefix) out[prefix] = '';
    for (const [k, v] of entries) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else {
    out[prefix] = value;
  }
}

const cast = {
  ...csvCast,
  boolean: (v: boolean) => (v ? 'true' : 'false'),
  object: (v: object) => JSON.stringify(v),
};

/** Events as CSV: one column per flattened field, in the order fields are first met. */
export function eventsCsv(events: readonly EventView[]): string {
  const rows = events.map((e) => {
    const out: Record<string, unknown> = {};
    flatten(e, '', out);
    return out;
  });
  const columns =
    rows.length > 0
      ? [...new Set(rows.flatMap((r) => Object.keys(r)))]
      : Object.keys(EventView.shape);
  return stringify(rows, { header: true, columns, cast });
}

/** Select results as CSV: the select expressions as the header. */
export function selectCsv(columns: readonly string[], results: readonly unknown[][]): string {
  return stringify([...results], { header: true, columns: [...columns], cast });
}
