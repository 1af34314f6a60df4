// What the CLI answers before it loads any command: kept apart so that answer stays fast.

/** The read models `rebuild` knows (test/cli/cliHelp checks it against the registry). */
export const REBUILD_TARGETS = [
  'access',
  'feature_flags',
  'cohorts',
  'dashboards',
  'feature_flag_hash_key_overrides',
  'ingestion_warnings',
  'persons',
  'event_deletions',
] as const;

export const USAGE = `usage: npm run cli -- <command> [options] [--json]
  project create --name NAME [--owner EMAIL]
  personal-key create --project ID --scopes a:read,b:write [--user EMAIL] [--label LABEL]
  role create --name NAME --access-level 21|37 [--member EMAIL ...]
  rebuild <${REBUILD_TARGETS.join('|')}|events|all>
  run-deletions
  person history DISTINCT_ID [--project ID]
  status                                (where each read model is against the log head)
  log export --to FILE.ndjson.gz [--from POSITION] [--until POSITION]
  log import --from FILE.ndjson.gz      (then: rebuild all)`;

/** The commands the CLI knows (noun, verb): checked before any database is opened. */
export const COMMANDS: readonly (readonly [string, string | null])[] = [
  ['project', 'create'],
  ['personal-key', 'create'],
  ['role', 'create'],
  ['rebuild', null],
  ['run-deletions', null],
  ['person', 'history'],
  ['status', null],
  ['log', 'export'],
  ['log', 'import'],
];

/** The options a command receives, as parsed from the command line. */
export type Options = {
  json?: boolean;
  name?: string;
  owner?: string;
  project?: string;
  scopes?: string;
  user?: string;
  label?: string;
  'access-level'?: string;
  member?: string[];
  to?: string;
  from?: string;
  until?: string;
};
