/**
 * CSV exports open in spreadsheets, which run a cell starting with `=`, `+`, `-` or `@` (or a tab
 * or carriage return before one) as a formula: property values are attacker-controlled (anyone
 * with the project key can set them). OWASP's rule: such a cell gets a leading `'`, which
 * spreadsheets show as text.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

export const safeCell = (value: string): string =>
  FORMULA_START.test(value) ? `'${value}` : value;

/** csv-stringify's `cast` for every export: strings pass through `safeCell`. */
export const csvCast = { string: safeCell } as const;
