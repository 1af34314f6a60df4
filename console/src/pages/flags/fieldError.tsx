import { ApiFailure } from '../../api/client.ts';

/** Where the form shows an API 400: the field `attr` names, or for `filters` the part its detail starts with. */
export type ErrorPlace =
  | 'key'
  | 'name'
  | 'groupType'
  | `condition-${number}`
  | 'conditions'
  | 'variants'
  | 'payloads'
  | 'form';

export function placeOf(error: unknown): ErrorPlace | null {
  if (!(error instanceof ApiFailure) || error.status !== 400) return error ? 'form' : null;
  const attr = error.body?.attr ?? '';
  if (attr === 'key' || attr === 'name') return attr;
  if (attr !== 'filters') return 'form';
  // PostHog's filters messages name the path first: "groups[1].rollout_percentage must be …".
  const detail = error.body?.detail ?? '';
  const condition = /^groups\[(\d+)\]/.exec(detail);
  if (condition) return `condition-${Number(condition[1])}`;
  if (/^multivariate|variant/i.test(detail)) return 'variants';
  if (/^payloads|payload/i.test(detail)) return 'payloads';
  if (/aggregation_group_type_index/.test(detail)) return 'groupType';
  return 'conditions';
}

/** The API's detail beside the field, announced, and referenced by the field's aria-describedby. */
export function FieldError({
  id,
  place,
  error,
  at,
}: {
  id: string;
  place: ErrorPlace | null;
  error: unknown;
  at: ErrorPlace;
}) {
  if (place !== at) return null;
  return (
    <p id={id} class="field-error" role="alert">
      {error instanceof Error ? error.message : 'The server refused this.'}
    </p>
  );
}
