import { describe, expect, it } from 'vitest';
import { insertStatement } from '../../src/runtime/chdbRawInsert.ts';

describe('the raw insert statement', () => {
  it('quotes column names, reads the file and keeps settings to the statement', () => {
    expect(
      insertStatement(
        'db.events',
        ['uuid', '$group_0'],
        'RowBinary',
        { insert_deduplication_token: "it's \\ a token", insert_deduplicate: 0, unset: undefined },
        '/tmp/x/0.RowBinary',
      ),
    ).toBe(
      "INSERT INTO db.events (`uuid`, `$group_0`) FROM INFILE '/tmp/x/0.RowBinary' " +
        "SETTINGS insert_deduplication_token = 'it\\'s \\\\ a token', insert_deduplicate = 0 FORMAT RowBinary",
    );
  });

  it('refuses a setting or format name that would change the statement', () => {
    expect(() => insertStatement('t', ['a'], 'RowBinary; DROP', {})).toThrow(/format/);
    expect(() => insertStatement('t', ['a'], 'RowBinary', { 'x = 1, y': 1 })).toThrow(/setting/);
  });
});
