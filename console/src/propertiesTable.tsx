import type { ComponentChildren } from 'preact';
import { Empty } from './states.tsx';

/** A property's value as text: strings bare, the rest as JSON, absent as "not set". */
export const propertyText = (value: unknown): string =>
  value === undefined ? 'not set' : typeof value === 'string' ? value : JSON.stringify(value);

/** Properties (an event's, a person's) by name: one row each, or `empty` when there are none. */
export function PropertiesTable({
  properties,
  caption,
  empty,
}: {
  properties: Record<string, unknown>;
  caption?: string;
  empty: ComponentChildren;
}) {
  const rows = Object.entries(properties).sort(([a], [b]) => a.localeCompare(b));
  if (rows.length === 0) return <Empty>{empty}</Empty>;
  return (
    <table class="properties">
      {caption && <caption>{caption}</caption>}
      <thead>
        <tr>
          <th scope="col">Property</th>
          <th scope="col">Value</th>
        </tr>
      </thead>
      <tbody>
        {rows.map(([key, value]) => (
          <tr key={key}>
            <th scope="row">{key}</th>
            <td>
              <code>{propertyText(value)}</code>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
