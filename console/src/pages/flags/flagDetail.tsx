import { useState } from 'preact/hooks';
import { Link, useLocation, useSearch } from 'wouter-preact';
import { Failure, Loading } from '../../states.tsx';
import { type Flag, useCanWriteFlags, useFlag } from './flagApi.ts';
import { rolloutSummary } from './flagDraft.ts';
import { FlagEvaluate } from './flagEvaluate.tsx';
import { FlagHistory } from './flagHistory.tsx';
import { FlagUsage } from './flagUsage.tsx';
import { RoleAccess } from './roleAccess.tsx';

/** `datetime-local` wants local wall time without a zone; the URL keeps the ISO instant. */
const localInput = (iso: string) => {
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
};

function FlagFacts({ flag }: { flag: Flag }) {
  const filters = flag.filters as { multivariate?: { variants?: { key: string }[] } | null };
  const variants = filters.multivariate?.variants ?? [];
  return (
    <>
      <dl class="facts">
        <dt>Status</dt>
        <dd>{flag.active ? 'Enabled' : 'Disabled'}</dd>
        <dt>Description</dt>
        <dd>{flag.name || '—'}</dd>
        <dt>Rollout</dt>
        <dd>{rolloutSummary(flag)}</dd>
        <dt>Variants</dt>
        <dd>{variants.length ? variants.map((v) => v.key).join(', ') : 'None (boolean flag)'}</dd>
        <dt>Updated</dt>
        <dd>
          <time dateTime={flag.updated_at}>{new Date(flag.updated_at).toLocaleString()}</time>
        </dd>
      </dl>
      <details>
        <summary>Filters as stored</summary>
        <pre class="code">{JSON.stringify(flag.filters, null, 2)}</pre>
      </details>
    </>
  );
}

/** The time control: the flag as of a past moment, from its stream (`?as_of=` is bookmarkable). */
function AsOfControl({ id, asOf }: { id: number; asOf: string | undefined }) {
  const [, navigate] = useLocation();
  const [draft, setDraft] = useState(asOf ? localInput(asOf) : '');
  return (
    <form
      class="filters"
      aria-label="The flag as of a moment"
      onSubmit={(e) => {
        e.preventDefault();
        const at = new Date(draft);
        if (!Number.isNaN(at.getTime()))
          navigate(`/feature_flags/${id}?as_of=${encodeURIComponent(at.toISOString())}`);
      }}
    >
      <div class="field">
        <label for="as-of">Show the flag as of</label>
        <input
          id="as-of"
          type="datetime-local"
          step="1"
          value={draft}
          onInput={(e) => setDraft(e.currentTarget.value)}
        />
      </div>
      <button type="submit">Show</button>
      {asOf && (
        <button type="button" onClick={() => navigate(`/feature_flags/${id}`)}>
          Back to now
        </button>
      )}
    </form>
  );
}

/** `/feature_flags/:id` (and `?as_of=`): the flag, evaluating it, who may edit, its usage and its history. */
export function FlagDetail({ id }: { id: number }) {
  const asOf = new URLSearchParams(useSearch()).get('as_of') ?? undefined;
  const flag = useFlag(id, asOf);
  const canWrite = useCanWriteFlags();
  if (flag.isPending) return <Loading what="the flag" />;
  if (flag.isError)
    return (
      <section aria-labelledby="page-title">
        <p>
          <Link href="/feature_flags">← All flags</Link>
        </p>
        <h1 id="page-title">Feature flag {id}</h1>
        {asOf && <AsOfControl key={asOf} id={id} asOf={asOf} />}
        <Failure error={flag.error} />
      </section>
    );
  const f = flag.data;
  const canEdit = canWrite && f.can_edit && !asOf;
  return (
    <section aria-labelledby="page-title">
      <p>
        <Link href="/feature_flags">← All flags</Link>
      </p>
      <div class="title-row">
        <h1 id="page-title" class="flag-title">
          <code>{f.key}</code>
          {asOf && ` as of ${new Date(asOf).toLocaleString()}`}
        </h1>
        {canEdit && <Link href={`/feature_flags/${id}/edit`}>Edit flag</Link>}
      </div>
      <AsOfControl key={asOf ?? 'now'} id={id} asOf={asOf} />
      <FlagFacts flag={f} />
      {!asOf && (
        <>
          <FlagEvaluate flagKey={f.key} />
          <RoleAccess flagId={id} canEdit={canEdit} />
          <FlagUsage flag={f} canEdit={canEdit} />
        </>
      )}
      <FlagHistory flagId={id} />
    </section>
  );
}
