import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyRows } from '../../src/db/copyRows.ts';
import { createTestDatabase } from '../support/testDatabase.ts';

// The COPY writer a rebuild uses for its fresh tables: every value comes back as it went in.
let pool: pg.Pool;
beforeAll(async () => {
  pool = new pg.Pool({ connectionString: await createTestDatabase(), max: 2 });
});
afterAll(async () => {
  await pool?.end();
});

describe('copyRows', () => {
  it('writes text, NULL, empty strings, JSON, booleans, bigints and dates faithfully', async () => {
    const client = await pool.connect();
    try {
      await client.query(
        'CREATE TABLE copied (id int, t text, j jsonb, b boolean, n bigint, at timestamptz)',
      );
      const at = new Date('2024-03-01T10:00:00.123Z');
      const rows: unknown[][] = [
        [1, 'plain', { a: 1 }, true, 12345678901234567n, at],
        [2, '', { s: 'quote " comma , nl \n tab \t backslash \\ ünï 😀' }, false, 0n, at],
        [3, null, null, null, null, null],
        [4, 'a "quoted", value\r\nover lines\\N', [1, 'two', null, { x: [] }], true, -5n, at],
        [5, 'NULL', {}, false, 1n, at],
      ];
      expect(await copyRows(client, 'copied', ['id', 't', 'j', 'b', 'n', 'at'], rows)).toBe(5);
      const { rows: back } = await client.query(
        'SELECT id, t, j, b, n::text AS n, at FROM copied ORDER BY id',
      );
      expect(back).toEqual(
        rows.map(([id, t, j, b, n, when]) => ({
          id,
          t,
          j,
          b,
          n: n === null ? null : String(n),
          at: when,
        })),
      );
    } finally {
      client.release();
    }
  });

  it('fails as the statement fails, and the connection stays usable', async () => {
    const client = await pool.connect();
    try {
      await client.query('CREATE TABLE strict_copy (id int NOT NULL)');
      await expect(copyRows(client, 'strict_copy', ['id'], [[1], [null]])).rejects.toThrow(
        /null value/,
      );
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      client.release();
    }
  });
});
