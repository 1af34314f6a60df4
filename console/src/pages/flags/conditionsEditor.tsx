import type { ErrorPlace } from './fieldError.tsx';
import { FieldError } from './fieldError.tsx';
import {
  type ConditionDraft,
  emptyCondition,
  emptyProperty,
  type FlagDraft,
  OPERATORS,
  type PropertyDraft,
} from './flagDraft.ts';

type Props = {
  draft: FlagDraft;
  setDraft: (d: FlagDraft) => void;
  place: ErrorPlace | null;
  error: unknown;
};

const without = <T,>(list: T[], i: number) => list.filter((_, j) => j !== i);
const replaced = <T,>(list: T[], i: number, item: T) => list.map((x, j) => (j === i ? item : x));

function PropertyRow({
  id,
  property,
  groupFlag,
  onChange,
  onRemove,
}: {
  id: string;
  property: PropertyDraft;
  groupFlag: boolean;
  onChange: (p: PropertyDraft) => void;
  onRemove: () => void;
}) {
  const set = (name: keyof PropertyDraft) => (e: { currentTarget: { value: string } }) =>
    onChange({ ...property, [name]: e.currentTarget.value });
  const noValue = property.operator === 'is_set' || property.operator === 'is_not_set';
  return (
    <fieldset class="property">
      <legend class="visually-hidden">Property filter</legend>
      <div class="field">
        <label for={`${id}-type`}>Type</label>
        <select id={`${id}-type`} value={property.type} onChange={set('type')}>
          <option value="person">Person property</option>
          {groupFlag && <option value="group">Group property</option>}
          <option value="cohort">Cohort (id)</option>
        </select>
      </div>
      <div class="field">
        <label for={`${id}-key`}>Property</label>
        <input id={`${id}-key`} value={property.key} onInput={set('key')} />
      </div>
      <div class="field">
        <label for={`${id}-op`}>Operator</label>
        <select id={`${id}-op`} value={property.operator} onChange={set('operator')}>
          {OPERATORS.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      </div>
      {!noValue && (
        <div class="field">
          <label for={`${id}-value`}>Value</label>
          <input
            id={`${id}-value`}
            value={property.value}
            placeholder="a, b for a list"
            onInput={set('value')}
          />
        </div>
      )}
      <button type="button" onClick={onRemove}>
        Remove filter
      </button>
    </fieldset>
  );
}

/** The release conditions: OR-ed, each with AND-ed property filters, a rollout and an optional variant override. */
export function ConditionsEditor({ draft, setDraft, place, error }: Props) {
  const setConditions = (conditions: ConditionDraft[]) => setDraft({ ...draft, conditions });
  return (
    <fieldset class="conditions">
      <legend>Release conditions</legend>
      <FieldError id="err-conditions" place={place} error={error} at="conditions" />
      {draft.conditions.map((c, i) => {
        const at: ErrorPlace = `condition-${i}`;
        const update = (next: Partial<ConditionDraft>) =>
          setConditions(replaced(draft.conditions, i, { ...c, ...next }));
        return (
          <fieldset class="condition" key={i}>
            <legend>Condition {i + 1}</legend>
            {c.properties.map((p, j) => (
              <PropertyRow
                key={j}
                id={`c${i}-p${j}`}
                property={p}
                groupFlag={draft.groupType !== ''}
                onChange={(next) => update({ properties: replaced(c.properties, j, next) })}
                onRemove={() => update({ properties: without(c.properties, j) })}
              />
            ))}
            <div class="row">
              <div class="field">
                <label for={`c${i}-rollout`}>Rollout % (condition {i + 1})</label>
                <input
                  id={`c${i}-rollout`}
                  type="text"
                  inputMode="decimal"
                  value={c.rollout}
                  aria-describedby={place === at ? `err-${at}` : undefined}
                  onInput={(e) => update({ rollout: e.currentTarget.value })}
                />
              </div>
              {draft.variants.length > 0 && (
                <div class="field">
                  <label for={`c${i}-variant`}>Variant override</label>
                  <select
                    id={`c${i}-variant`}
                    value={c.variant}
                    onChange={(e) => update({ variant: e.currentTarget.value })}
                  >
                    <option value="">None (by the variants' split)</option>
                    {draft.variants.map((v) => (
                      <option key={v.key} value={v.key}>
                        {v.key}
                      </option>
                    ))}
                  </select>
                </div>
              )}
              <button
                type="button"
                onClick={() => update({ properties: [...c.properties, emptyProperty()] })}
              >
                Add filter
              </button>
              <button type="button" onClick={() => setConditions(without(draft.conditions, i))}>
                Remove condition {i + 1}
              </button>
            </div>
            <FieldError id={`err-${at}`} place={place} error={error} at={at} />
          </fieldset>
        );
      })}
      <button type="button" onClick={() => setConditions([...draft.conditions, emptyCondition()])}>
        Add condition
      </button>
    </fieldset>
  );
}
