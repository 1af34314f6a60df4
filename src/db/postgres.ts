import pg from 'pg';

// int8 columns (positions, revisions) stay strings unless parsed deliberately; counts are parsed here.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);

export function createPool(connectionString: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString, max });
  // An idle client losing its connection (server restart) must not crash the process.
  pool.on('error', () => undefined);
  // Nor must a checked-out client's: the query in progress rejects with the error anyway.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

export async function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

export type Queryable = Pick<pg.PoolClient, 'query'>;
