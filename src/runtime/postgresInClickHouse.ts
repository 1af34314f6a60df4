/** A ClickHouse string literal. */
export const chString = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/**
 * A Postgres database as ClickHouse reads it itself, through the `postgresql()` table function:
 * the event log for a rebuild (src/processing/logInClickHouse.ts) and the read models HogQL joins
 * (projections/hogql/tables.ts). The password is in the function's arguments: `redact` takes it
 * out of every text a client sees (ClickHouse may quote the statement in its errors).
 */
export type PostgresInClickHouse = Readonly<{
  table: (name: string) => string;
  redact: (text: string) => string;
}>;

/** The Postgres at `connectionString` as ClickHouse reaches it by TCP; undefined when it cannot. */
export function postgresInClickHouse(connectionString: string): PostgresInClickHouse | undefined {
  let url: URL;
  try {
    url = new URL(connectionString);
  } catch {
    return undefined;
  }
  // a Unix socket (`?host=/run/postgresql`) is not something the table function can open
  if (!url.hostname || url.searchParams.has('host')) return undefined;
  const address = `${url.hostname}:${url.port || '5432'}`;
  const database = decodeURIComponent(url.pathname.slice(1)) || 'postgres';
  const user = decodeURIComponent(url.username) || 'postgres';
  const password = decodeURIComponent(url.password);
  return {
    table: (name) =>
      `postgresql(${[address, database, name, user, password].map(chString).join(', ')})`,
    redact: (text) => (password ? text.replaceAll(chString(password), "'***'") : text),
  };
}
