/**
 * HogQL, PostHog's SQL dialect, compiled to ClickHouse SQL over this project's read models (issue
 * #29). Parsing is PostHog's own parser (@posthog/hogql-parser); the printer, the schema and the
 * project guard are ours. docs/DECISIONS.md "HogQL compiler".
 */
export { HogQLError, HogQLTimeoutError } from './errors.ts';
export { allowedFunctionNames } from './functions.ts';
export { parseCacheStats, parseExpr, parseSelect, warmParser } from './parser.ts';
export {
  compileHogQL,
  DEFAULT_LIMIT,
  HOGQL_SETTINGS,
  type HogQLDeps,
  type HogQLResult,
  type HogQLRun,
  MAX_LIMIT,
  MAX_RESULT_BYTES,
  runHogQL,
} from './run.ts';
export { hogqlDatabaseSchema } from './schema.ts';
