import { fail, validation } from '../../../src/core/errors.ts';
import { isUuid } from '../../../src/core/uuid.ts';

/** A person named by its integer id or its uuid, as the `:id` of persons routes and `person_id` do. */
export type PersonRef = { kind: 'id'; id: number } | { kind: 'uuid'; uuid: string };

const MAX_INT = 2_147_483_647;

/**
 * Digits are an integer id, a UUID (any case) is the person uuid; anything else names no person
 * (null). An id past Postgres' integer range is a well-formed ref that names nobody.
 */
export function parsePersonRef(raw: string): PersonRef | null {
  if (/^\d+$/.test(raw)) return { kind: 'id', id: Number(raw) };
  if (isUuid(raw)) return { kind: 'uuid', uuid: raw.toLowerCase() };
  return null;
}

/** Whether a ref can name a stored person at all (integer ids stop at 2^31 - 1). */
export const isStorable = (ref: PersonRef): boolean => ref.kind === 'uuid' || ref.id <= MAX_INT;

/** `:id` of a persons route: an integer id or a uuid, else 400 with PostHog's words. */
export function personRefOrThrow(raw: string): PersonRef {
  const ref = parsePersonRef(raw);
  if (ref) return ref;
  fail(
    validation(
      'invalid',
      `The ID provided does not look like a personID. If you are using a distinctId, please use /persons?distinct_id=${raw} instead.`,
    ),
  );
}
