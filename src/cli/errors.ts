/** A malformed command line: exit 2 with the usage. */
export class UsageError extends Error {}
/** A well-formed request for something that does not exist: exit 1, no usage text. */
export class NotFound extends Error {}

/** The value of a required option, or a usage error naming it. */
export function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`missing --${flag}`);
  return value;
}
