/**
 * Which ClickHouse failures a query's text or values cause (the client's fault: 400), told apart
 * from outages (503, `isDependencyUnavailable`) and bugs (500).
 *
 * Both runtimes reach here through @clickhouse/client: a ClickHouse server's error is a
 * `ClickHouseError` with `type` (the name) and `code` (the number, as text) parsed from
 * `Code: N. DB::Exception: … (NAME)`; chDB's Connection reshapes its errors the same way, and
 * when its message does not parse it throws a plain `Error` whose `cause` is chDB's own error
 * (`code: 'CHDB_BIND'` when a parameter value cannot be sent). Names and numbers are those of
 * ClickHouse's src/Common/ErrorCodes.cpp; both are matched, so a message without its `(NAME)`
 * suffix is still recognised by its `Code: N.`.
 */

/** Errors of the statement itself: syntax, names, types, arguments, values, size of the AST. */
const QUERY_TEXT_ERRORS: Readonly<Record<string, number>> = {
  CANNOT_PARSE_TEXT: 6,
  POSITION_OUT_OF_BOUND: 11,
  PARAMETER_OUT_OF_BOUND: 12,
  CANNOT_PARSE_ESCAPE_SEQUENCE: 25,
  CANNOT_PARSE_QUOTED_STRING: 26,
  CANNOT_PARSE_INPUT_ASSERTION_FAILED: 27,
  TOO_MANY_ARGUMENTS_FOR_FUNCTION: 34,
  TOO_FEW_ARGUMENTS_FOR_FUNCTION: 35,
  BAD_ARGUMENTS: 36,
  CANNOT_PARSE_DATE: 38,
  CANNOT_PARSE_DATETIME: 41,
  NUMBER_OF_ARGUMENTS_DOESNT_MATCH: 42,
  ILLEGAL_TYPE_OF_ARGUMENT: 43,
  ILLEGAL_COLUMN: 44,
  UNKNOWN_FUNCTION: 46,
  UNKNOWN_IDENTIFIER: 47,
  UNKNOWN_TYPE: 50,
  TYPE_MISMATCH: 53,
  ILLEGAL_TYPE_OF_COLUMN_FOR_FILTER: 59,
  SYNTAX_ERROR: 62,
  UNKNOWN_AGGREGATE_FUNCTION: 63,
  ARGUMENT_OUT_OF_BOUND: 69,
  CANNOT_CONVERT_TYPE: 70,
  CANNOT_PARSE_NUMBER: 72,
  INCORRECT_QUERY: 80,
  INCORRECT_DATA: 117,
  INCORRECT_ELEMENT_OF_SET: 124,
  TOO_LARGE_ARRAY_SIZE: 128,
  TOO_LARGE_STRING_SIZE: 131,
  ZERO_ARRAY_OR_TUPLE_INDEX: 135,
  ILLEGAL_DIVISION: 153,
  TOO_DEEP_SUBQUERIES: 162,
  TOO_MANY_TEMPORARY_COLUMNS: 165,
  TOO_MANY_TEMPORARY_NON_CONST_COLUMNS: 166,
  TOO_DEEP_AST: 167,
  TOO_BIG_AST: 168,
  BAD_TYPE_OF_FIELD: 169,
  ILLEGAL_AGGREGATION: 184,
  SIZES_OF_ARRAYS_DONT_MATCH: 190,
  NOT_AN_AGGREGATE: 215,
  QUERY_IS_TOO_LARGE: 229,
  TOO_DEEP_RECURSION: 306,
  VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE: 321,
  AMBIGUOUS_COLUMN_NAME: 352,
  CANNOT_PARSE_UUID: 376,
  NO_COMMON_TYPE: 386,
  FUNCTION_THROW_IF_VALUE_IS_NON_ZERO: 395,
  DECIMAL_OVERFLOW: 407,
  CANNOT_COMPILE_REGEXP: 427,
  BAD_QUERY_PARAMETER: 457,
  CANNOT_PARSE_BOOL: 467,
  CANNOT_FORMAT_DATETIME: 490,
  UNEXPECTED_DATA_AFTER_PARSED_VALUE: 632,
};
/**
 * A query too costly for its limits (`max_execution_time`, `max_memory_usage`, `max_result_rows`
 * of the events reader): the request's fault too, answered 400 as documented in
 * queries/events/README.md.
 * Connection failures and client-side timeouts are not here: they stay 503.
 */
const QUERY_COST_ERRORS: Readonly<Record<string, number>> = {
  TIMEOUT_EXCEEDED: 159,
  MEMORY_LIMIT_EXCEEDED: 241,
  TOO_MANY_ROWS_OR_BYTES: 396,
};
const BY_NAME: ReadonlyMap<string, number> = new Map(
  Object.entries({ ...QUERY_TEXT_ERRORS, ...QUERY_COST_ERRORS }),
);
const BY_CODE: ReadonlyMap<number, string> = new Map([...BY_NAME].map(([n, c]) => [c, n]));

/** What a client is told: the ClickHouse name and the first sentence(s) of its message. */
export type ClickHouseQueryError = Readonly<{ type: string; message: string }>;

/** The message without the statement ClickHouse quotes after it ("In scope SELECT …") or its version. */
const cleaned = (message: string) =>
  message
    .replace(/^Code: \d+\. DB::Exception: /, '')
    .split(/[:.]?\s*(?:In scope|\(version |Stack trace)/)[0]!
    .trim()
    .slice(0, 300);

/** The query-caused failure `error` is, or null for anything else (outage, bug, unknown). */
export function clickHouseQueryError(error: unknown): ClickHouseQueryError | null {
  if (!(error instanceof Error)) return null;
  const e = error as Error & { type?: unknown; code?: unknown; cause?: unknown };
  // a ClickHouseError has a `type`; a message the client could not parse still says DB::Exception
  // (checked first: Postgres errors carry numeric SQLSTATE codes of their own)
  if (typeof e.type === 'string' || e.message.includes('DB::Exception')) {
    const number =
      (typeof e.code === 'string' && /^\d+$/.test(e.code) ? e.code : undefined) ??
      /Code: (\d+)\./.exec(e.message)?.[1];
    const name =
      typeof e.type === 'string' && BY_NAME.has(e.type) ? e.type : BY_CODE.get(Number(number));
    if (name) return { type: name, message: cleaned(e.message) };
  }
  const cause = e.cause as { code?: unknown } | undefined;
  if (cause?.code === 'CHDB_BIND')
    return { type: 'BAD_QUERY_PARAMETER', message: cleaned(e.message) };
  return null;
}
