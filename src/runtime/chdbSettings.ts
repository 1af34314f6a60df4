type Settings = Record<string, unknown>;
type WithSettings = { clickhouse_settings?: Settings };

const SCOPED = new Set(['query', 'exec', 'command', 'insert']);

/**
 * chDB's Connection runs a statement's settings as `SET k = v; <statement>` in its one session,
 * so they outlive the statement: a live insert's `insert_deduplication_token` made a rebuild's
 * later inserts into a shadow table count as duplicates and vanish, and a user query's
 * `max_execution_time` / `max_memory_usage` bounded every statement after it. A ClickHouse server
 * scopes settings to the request; this makes chDB do the same: every statement sets every setting
 * any statement has set, to its own value or else to the default `system.settings` gives
 * (`loadDefaults`, called once the client is up; until then statements pass as they are).
 */
export function statementScopedSettings<C extends object>(
  connection: C,
): { connection: C; loadDefaults: (defaults: ReadonlyMap<string, string>) => void } {
  let defaults: ReadonlyMap<string, string> | undefined;
  /** each setting a statement has set, at its default */
  const reset: Settings = {};
  const scoped = (settings: Settings | undefined): Settings | undefined => {
    if (!defaults) return settings;
    for (const key of Object.keys(settings ?? {}))
      if (!Object.hasOwn(reset, key) && defaults.has(key)) {
        const value = defaults.get(key)!;
        // chDB's adapter quotes strings and writes numbers as they are: a number stays a number
        reset[key] = /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
      }
    return { ...reset, ...settings };
  };
  const proxy = new Proxy(connection, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      if (typeof property !== 'string' || !SCOPED.has(property)) return value.bind(target);
      return (params: WithSettings) =>
        value.call(target, { ...params, clickhouse_settings: scoped(params.clickhouse_settings) });
    },
  });
  return {
    connection: proxy,
    loadDefaults: (loaded) => {
      defaults = loaded;
    },
  };
}
