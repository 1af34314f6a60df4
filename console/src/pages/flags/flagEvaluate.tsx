import { useQuery } from '@tanstack/react-query';
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api/client.ts';
import { useProjectId } from '../../auth.ts';
import { Failure, Loading } from '../../states.tsx';

/** "Evaluate for a distinct id": the flag's value and reason as /decide would answer (evaluation_reasons). */
export function FlagEvaluate({ flagKey }: { flagKey: string }) {
  const projectId = useProjectId()!;
  const [draft, setDraft] = useState('');
  const [distinctId, setDistinctId] = useState('');
  const result = useQuery({
    queryKey: ['feature_flags', projectId, 'evaluation_reasons', distinctId],
    enabled: distinctId !== '',
    staleTime: 0,
    queryFn: async () =>
      unwrap(
        await api.GET('/api/projects/{project_id}/feature_flags/evaluation_reasons/', {
          params: { path: { project_id: String(projectId) }, query: { distinct_id: distinctId } },
        }),
      ),
  });
  const mine = result.data?.[flagKey];
  return (
    <section aria-labelledby="evaluate-title">
      <h2 id="evaluate-title">Evaluate for a distinct id</h2>
      <form
        class="filters"
        aria-label="Evaluate the flag"
        onSubmit={(e) => {
          e.preventDefault();
          setDistinctId(draft.trim());
          if (draft.trim() === distinctId) void result.refetch();
        }}
      >
        <div class="field">
          <label for="evaluate-id">Distinct id</label>
          <input id="evaluate-id" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
        </div>
        <button type="submit">Evaluate</button>
      </form>
      {distinctId === '' ? null : result.isPending ? (
        <Loading what="the evaluation" />
      ) : result.isError ? (
        <Failure error={result.error} />
      ) : (
        <output class="evaluation" aria-live="polite">
          {mine ? (
            <dl class="facts">
              <dt>Value for {distinctId}</dt>
              <dd>
                <code>{JSON.stringify(mine.value)}</code>
              </dd>
              <dt>Reason</dt>
              <dd>
                {mine.evaluation.reason.replaceAll('_', ' ')}
                {mine.evaluation.condition_index !== null &&
                  ` (condition ${mine.evaluation.condition_index + 1})`}
              </dd>
            </dl>
          ) : (
            <p>The flag is not evaluated for {distinctId} (disabled or deleted).</p>
          )}
        </output>
      )}
    </section>
  );
}
