// What the CLI's parser needs before it loads any command: kept apart so help stays fast.

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
  'insights',
  'annotations',
  'actions',
] as const;

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
  position?: string;
  all?: boolean;
};
