import type { ErrorPlace } from './fieldError.tsx';
import { FieldError } from './fieldError.tsx';
import { type FlagDraft, payloadKeys, type VariantDraft } from './flagDraft.ts';

type Props = {
  draft: FlagDraft;
  setDraft: (d: FlagDraft) => void;
  place: ErrorPlace | null;
  error: unknown;
};

/** Variants (a multivariate flag: their rollouts must add up to 100, the API says so if not) and payloads. */
export function VariantsEditor({ draft, setDraft, place, error }: Props) {
  const setVariants = (variants: VariantDraft[]) => setDraft({ ...draft, variants });
  return (
    <>
      <fieldset class="variants">
        <legend>Variants</legend>
        {draft.variants.length === 0 && (
          <p class="help">No variants: the flag is on or off (a boolean flag).</p>
        )}
        {draft.variants.map((v, i) => {
          const set = (name: keyof VariantDraft) => (e: { currentTarget: { value: string } }) =>
            setVariants(
              draft.variants.map((x, j) => (j === i ? { ...v, [name]: e.currentTarget.value } : x)),
            );
          return (
            <div class="row" key={i}>
              <div class="field">
                <label for={`v${i}-key`}>Variant {i + 1} key</label>
                <input id={`v${i}-key`} value={v.key} onInput={set('key')} />
              </div>
              <div class="field">
                <label for={`v${i}-name`}>Variant {i + 1} description</label>
                <input id={`v${i}-name`} value={v.name} onInput={set('name')} />
              </div>
              <div class="field">
                <label for={`v${i}-rollout`}>Variant {i + 1} split %</label>
                <input
                  id={`v${i}-rollout`}
                  inputMode="decimal"
                  value={v.rollout}
                  onInput={set('rollout')}
                />
              </div>
              <button
                type="button"
                onClick={() => setVariants(draft.variants.filter((_, j) => j !== i))}
              >
                Remove variant {i + 1}
              </button>
            </div>
          );
        })}
        <button
          type="button"
          onClick={() => setVariants([...draft.variants, { key: '', name: '', rollout: '' }])}
        >
          Add variant
        </button>
        <FieldError id="err-variants" place={place} error={error} at="variants" />
      </fieldset>
      <fieldset class="payloads">
        <legend>Payloads (JSON)</legend>
        {payloadKeys(draft).map((key) => (
          <div class="field wide" key={key}>
            <label for={`payload-${key}`}>Payload when “{key}”</label>
            <textarea
              id={`payload-${key}`}
              class="code"
              rows={2}
              value={draft.payloads[key] ?? ''}
              onInput={(e) =>
                setDraft({
                  ...draft,
                  payloads: { ...draft.payloads, [key]: e.currentTarget.value },
                })
              }
            />
          </div>
        ))}
        <FieldError id="err-payloads" place={place} error={error} at="payloads" />
      </fieldset>
    </>
  );
}
