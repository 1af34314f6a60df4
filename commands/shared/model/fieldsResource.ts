import type { Event } from '../../../src/core/event.ts';

/**
 * A resource that is a record of fields with a soft delete, as PostHog keeps actions, annotations
 * and dashboards: `<Prefix>Created` brings the project and every field, `<Prefix>Updated` only the
 * changed fields, `<Prefix>SoftDeleted` hides it and `<Prefix>Restored` (where the resource has it)
 * brings it back. Their state and its fold are the same; only the names of the events differ, so
 * each model keeps its own events and takes its `evolve` from here.
 */
export type FieldsResourceState<F> =
  | { status: 'absent' }
  | { status: 'present'; projectId: number; fields: F; deleted: boolean };

/** The events a fields resource's `evolve` reads (each model's carry more data, e.g. its id). */
export type FieldsResourceEvent<P extends string, F> =
  | Event<`${P}Created`, { projectId: number; fields: F }>
  | Event<`${P}Updated`, { changes: Partial<F> }>
  | Event<`${P}SoftDeleted` | `${P}Restored`, object>;

export const initialFieldsResourceState = <F>(): FieldsResourceState<F> => ({ status: 'absent' });

/** The `evolve` of the resource whose events are named `<prefix>Created`, `<prefix>Updated`… */
export function fieldsResourceEvolve<P extends string, F>(prefix: P) {
  const type = {
    created: `${prefix}Created`,
    updated: `${prefix}Updated`,
    softDeleted: `${prefix}SoftDeleted`,
    restored: `${prefix}Restored`,
  };
  return (
    state: FieldsResourceState<F>,
    event: FieldsResourceEvent<P, F>,
  ): FieldsResourceState<F> => {
    if (state.status === 'absent') {
      if (event.type !== type.created) return state;
      const { projectId, fields } = event.data as { projectId: number; fields: F };
      return { status: 'present', projectId, fields, deleted: false };
    }
    switch (event.type) {
      case type.updated: {
        const { changes } = event.data as { changes: Partial<F> };
        return { ...state, fields: { ...state.fields, ...changes } };
      }
      case type.softDeleted:
        return { ...state, deleted: true };
      case type.restored:
        return { ...state, deleted: false };
      default:
        // a second Created of the same stream changes nothing
        return state;
    }
  };
}
