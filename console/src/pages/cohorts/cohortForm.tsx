import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { useProjectId } from '../../auth.ts';
import { Failure } from '../../states.tsx';
import {
  createCohort,
  filtersOf,
  OPERATORS,
  type PersonCondition,
  takesValue,
  useCanWriteCohorts,
} from './cohortApi.ts';

const blank = (): PersonCondition => ({ key: '', operator: 'exact', value: '' });

function ConditionRow({
  n,
  condition,
  onChange,
  onRemove,
}: {
  n: number;
  condition: PersonCondition;
  onChange: (c: PersonCondition) => void;
  onRemove?: () => void;
}) {
  return (
    <fieldset class="property">
      <legend>Condition {n}</legend>
      <div class="field">
        <label for={`c${n}-key`}>Person property</label>
        <input
          id={`c${n}-key`}
          required
          value={condition.key}
          placeholder="e.g. plan"
          onInput={(e) => onChange({ ...condition, key: e.currentTarget.value })}
        />
      </div>
      <div class="field">
        <label for={`c${n}-op`}>Operator</label>
        <select
          id={`c${n}-op`}
          value={condition.operator}
          onChange={(e) => onChange({ ...condition, operator: e.currentTarget.value })}
        >
          {OPERATORS.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </div>
      {takesValue(condition.operator) && (
        <div class="field">
          <label for={`c${n}-value`}>Value</label>
          <input
            id={`c${n}-value`}
            value={condition.value}
            onInput={(e) => onChange({ ...condition, value: e.currentTarget.value })}
          />
        </div>
      )}
      {onRemove && (
        <button type="button" onClick={onRemove}>
          Remove condition {n}
        </button>
      )}
    </fieldset>
  );
}

/**
 * `/cohorts/new`: a dynamic cohort from person property conditions, or a static one from a CSV file of distinct ids.
 * The API validates; its error is shown as it answers it.
 */
export function NewCohort() {
  const projectId = useProjectId()!;
  const [, navigate] = useLocation();
  const client = useQueryClient();
  const canWrite = useCanWriteCohorts();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [kind, setKind] = useState<'dynamic' | 'static'>('dynamic');
  const [match, setMatch] = useState<'AND' | 'OR'>('AND');
  const [conditions, setConditions] = useState([blank()]);
  const [csv, setCsv] = useState<File | null>(null);
  const save = useMutation({
    mutationFn: () =>
      createCohort(
        projectId,
        kind === 'dynamic'
          ? { kind, name, description, filters: filtersOf(match, conditions) }
          : { kind, name, description, csv: csv! },
      ),
    onSuccess: async (cohort) => {
      await client.invalidateQueries({ queryKey: ['cohorts', projectId] });
      navigate(`/cohorts/${cohort.id}`);
    },
  });
  if (!canWrite)
    return <Failure error={new Error('This key cannot create cohorts (it needs cohort:write).')} />;
  const setCondition = (i: number) => (c: PersonCondition) =>
    setConditions(conditions.map((old, j) => (j === i ? c : old)));
  return (
    <section aria-labelledby="page-title">
      <p>
        <Link href="/cohorts">← All cohorts</Link>
      </p>
      <h1 id="page-title">New cohort</h1>
      <form
        class="cohort-form"
        aria-label="New cohort"
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate();
        }}
      >
        <div class="field">
          <label for="cohort-name">Name</label>
          <input
            id="cohort-name"
            required
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for="cohort-description">Description</label>
          <input
            id="cohort-description"
            value={description}
            onInput={(e) => setDescription(e.currentTarget.value)}
          />
        </div>
        <fieldset>
          <legend>Kind</legend>
          <label class="check">
            <input
              type="radio"
              name="kind"
              checked={kind === 'dynamic'}
              onChange={() => setKind('dynamic')}
            />{' '}
            Dynamic: persons matching conditions, recalculated
          </label>
          <label class="check">
            <input
              type="radio"
              name="kind"
              checked={kind === 'static'}
              onChange={() => setKind('static')}
            />{' '}
            Static: the persons of a CSV file
          </label>
        </fieldset>
        {kind === 'dynamic' ? (
          <fieldset>
            <legend>Conditions</legend>
            <div class="field">
              <label for="cohort-match">Persons matching</label>
              <select
                id="cohort-match"
                value={match}
                onChange={(e) => setMatch(e.currentTarget.value as 'AND' | 'OR')}
              >
                <option value="AND">all conditions</option>
                <option value="OR">any condition</option>
              </select>
            </div>
            {conditions.map((c, i) => (
              <ConditionRow
                key={i}
                n={i + 1}
                condition={c}
                onChange={setCondition(i)}
                {...(conditions.length > 1
                  ? { onRemove: () => setConditions(conditions.filter((_, j) => j !== i)) }
                  : {})}
              />
            ))}
            <button type="button" onClick={() => setConditions([...conditions, blank()])}>
              Add condition
            </button>
          </fieldset>
        ) : (
          <div class="field">
            <label for="cohort-csv">CSV file of distinct ids</label>
            <input
              id="cohort-csv"
              type="file"
              accept=".csv,text/csv"
              required
              aria-describedby="cohort-csv-help"
              onChange={(e) => setCsv(e.currentTarget.files?.[0] ?? null)}
            />
            <p id="cohort-csv-help" class="help">
              One distinct id per line in the first column; a <code>distinct_id</code> header is
              skipped.
            </p>
          </div>
        )}
        {save.isError && <Failure error={save.error} />}
        <div class="actions">
          <button type="submit" disabled={save.isPending}>
            {save.isPending ? 'Creating…' : 'Create cohort'}
          </button>
        </div>
      </form>
    </section>
  );
}
