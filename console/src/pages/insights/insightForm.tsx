import { useState } from 'preact/hooks';

export type Field = {
  name: string;
  label: string;
  hint?: string;
  /** a select's choices (value, label); absent: a text input */
  options?: readonly (readonly [string, string])[];
};

/** The date range and property filter every insight has, after its own fields. */
export const COMMON_FIELDS: Field[] = [
  { name: 'date_from', label: 'From', hint: '-7d, -24h, 2026-01-01, all' },
  { name: 'date_to', label: 'To', hint: 'now, or a date' },
  { name: 'property', label: 'Property filter', hint: 'key=value, or key (is set)' },
  {
    name: 'property_type',
    label: 'Property of',
    options: [
      ['event', 'the event'],
      ['person', 'the person'],
    ],
  },
];

/**
 * An insight's parameters as a form: edited as a draft, applied by navigating (the URL is the state), so Apply is
 * one history entry and the back button returns to the chart before.
 */
export function InsightForm({
  label,
  fields,
  values,
  onApply,
}: {
  label: string;
  fields: Field[];
  values: Record<string, string>;
  onApply: (values: Record<string, string>) => void;
}) {
  const [draft, setDraft] = useState(values);
  const set = (name: string) => (e: { currentTarget: { value: string } }) =>
    setDraft({ ...draft, [name]: e.currentTarget.value });
  return (
    <form
      class="filters"
      aria-label={label}
      onSubmit={(e) => {
        e.preventDefault();
        onApply(draft);
      }}
    >
      {fields.map((f) => (
        <div class="field" key={f.name}>
          <label for={`i-${f.name}`}>{f.label}</label>
          {f.options ? (
            <select id={`i-${f.name}`} value={draft[f.name] ?? ''} onChange={set(f.name)}>
              {f.options.map(([value, text]) => (
                <option key={value} value={value}>
                  {text}
                </option>
              ))}
            </select>
          ) : (
            <input
              id={`i-${f.name}`}
              value={draft[f.name] ?? ''}
              placeholder={f.hint}
              onInput={set(f.name)}
            />
          )}
        </div>
      ))}
      <div class="actions">
        <button type="submit">Apply</button>
      </div>
    </form>
  );
}
