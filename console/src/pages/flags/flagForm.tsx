import { useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { Failure, Loading } from '../../states.tsx';
import { ConditionsEditor } from './conditionsEditor.tsx';
import { FieldError, placeOf } from './fieldError.tsx';
import { type Flag, useCanWriteFlags, useFlag, useGroupTypes, useSaveFlag } from './flagApi.ts';
import { draftOf, inputOf } from './flagDraft.ts';
import { VariantsEditor } from './variantsEditor.tsx';

/** Create (`flag` null) or edit; the server validates, and its 400 detail appears beside the field it names. */
function FlagForm({ flag }: { flag: Flag | null }) {
  const [, navigate] = useLocation();
  const [draft, setDraft] = useState(() => draftOf(flag));
  const save = useSaveFlag(flag?.id ?? null);
  const groupTypes = useGroupTypes().data ?? [];
  // A stored group type index the project no longer lists stays selectable, so an edit does not change it.
  const groupOptions = groupTypes.map((g) => ({
    index: String(g.group_type_index),
    label: g.name_plural ?? g.group_type,
  }));
  if (draft.groupType !== '' && !groupOptions.some((o) => o.index === draft.groupType))
    groupOptions.push({ index: draft.groupType, label: `group type ${draft.groupType}` });
  const place = placeOf(save.error);
  const described = (at: string) => (place === at ? `err-${at}` : undefined);
  const title = flag ? `Edit ${flag.key}` : 'New feature flag';
  return (
    <section aria-labelledby="page-title">
      <p>
        <Link href={flag ? `/feature_flags/${flag.id}` : '/feature_flags'}>← Back</Link>
      </p>
      <h1 id="page-title">{title}</h1>
      <form
        class="flag-form"
        aria-label={title}
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate(inputOf(draft), {
            onSuccess: (saved) => navigate(`/feature_flags/${saved.id}`),
          });
        }}
      >
        <div class="row">
          <div class="field">
            <label for="flag-key">Key</label>
            <input
              id="flag-key"
              class="code"
              value={draft.key}
              aria-describedby={described('key')}
              onInput={(e) => setDraft({ ...draft, key: e.currentTarget.value })}
            />
            <FieldError id="err-key" place={place} error={save.error} at="key" />
          </div>
          <div class="field wide">
            <label for="flag-name">Description</label>
            <input
              id="flag-name"
              value={draft.name}
              aria-describedby={described('name')}
              onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })}
            />
            <FieldError id="err-name" place={place} error={save.error} at="name" />
          </div>
        </div>
        <div class="row">
          <label class="check">
            <input
              type="checkbox"
              checked={draft.active}
              onChange={(e) => setDraft({ ...draft, active: e.currentTarget.checked })}
            />{' '}
            Enabled
          </label>
          <label class="check">
            <input
              type="checkbox"
              checked={draft.continuity}
              onChange={(e) => setDraft({ ...draft, continuity: e.currentTarget.checked })}
            />{' '}
            Persist across authentication steps
          </label>
          <div class="field">
            <label for="flag-group-type">Match by</label>
            <select
              id="flag-group-type"
              value={draft.groupType}
              aria-describedby={described('groupType')}
              onChange={(e) => setDraft({ ...draft, groupType: e.currentTarget.value })}
            >
              <option value="">Persons</option>
              {groupOptions.map((o) => (
                <option key={o.index} value={o.index}>
                  Groups: {o.label}
                </option>
              ))}
            </select>
            <FieldError id="err-groupType" place={place} error={save.error} at="groupType" />
          </div>
        </div>
        <ConditionsEditor draft={draft} setDraft={setDraft} place={place} error={save.error} />
        <VariantsEditor draft={draft} setDraft={setDraft} place={place} error={save.error} />
        <FieldError id="err-form" place={place} error={save.error} at="form" />
        <div class="actions">
          <button type="submit" disabled={save.isPending}>
            {save.isPending ? 'Saving…' : flag ? 'Save changes' : 'Create flag'}
          </button>
        </div>
      </form>
    </section>
  );
}

/** `/feature_flags/new` */
export function NewFlag() {
  if (!useCanWriteFlags()) return <Failure error={new Error('This key cannot create flags.')} />;
  return <FlagForm flag={null} />;
}

/** `/feature_flags/:id/edit` */
export function EditFlag({ id }: { id: number }) {
  const flag = useFlag(id);
  const canWrite = useCanWriteFlags();
  if (flag.isPending) return <Loading what="the flag" />;
  if (flag.isError) return <Failure error={flag.error} />;
  if (!canWrite || !flag.data.can_edit)
    return <Failure error={new Error('This key cannot edit this flag.')} />;
  return <FlagForm flag={flag.data} />;
}
