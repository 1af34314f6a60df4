import { describe, expect, it } from 'vitest';
import { decideHashKeyOverrides } from '../../../commands/featureFlags/model/hashKeyOverride.ts';
import { parseDecideInput } from '../../../queries/decide/decideRequest.ts';
import { decideVersion } from '../../../queries/decide/decideResponse.ts';

describe('parseDecideInput (flags.md §4.1)', () => {
  it('looks the token up in query, form, then $token, token, api_key', () => {
    const body = { $token: 'b1', token: 'b2', api_key: 'b3', distinct_id: 'd' };
    const tokenOf = (q: Record<string, string>, f: Record<string, string>, b: object) => {
      const r = parseDecideInput(b, f, q);
      return 'token' in r ? r.token : r.error.code;
    };
    expect(tokenOf({ token: 'q' }, { api_key: 'f' }, body)).toBe('q');
    expect(tokenOf({}, { api_key: 'f' }, body)).toBe('f');
    expect(tokenOf({}, {}, body)).toBe('b1');
    expect(tokenOf({}, {}, { api_key: 'b3', distinct_id: 'd' })).toBe('b3');
    expect(tokenOf({}, {}, { distinct_id: 'd' })).toBe('no_api_key');
  });

  it('keeps an $anon_distinct_id only when it can be stored: bounded, no NUL', () => {
    const anon = (v: unknown) => {
      const r = parseDecideInput({ token: 't', distinct_id: 'd', $anon_distinct_id: v }, {}, {});
      return 'token' in r ? r.anonDistinctId : r.error.code;
    };
    expect(anon('anon-1')).toBe('anon-1');
    expect(anon(7)).toBe('7');
    expect(anon('a'.repeat(1_000))).toBe('a'.repeat(1_000));
    expect(anon('a'.repeat(1_001))).toBeUndefined();
    expect(anon('a\u0000b')).toBeUndefined();
    expect(anon('')).toBeUndefined();
    expect(anon({ not: 'an id' })).toBeUndefined();
  });

  it('coerces a numeric distinct_id; refuses a missing or overlong one', () => {
    const r = parseDecideInput({ token: 't', distinct_id: 42 }, {}, {});
    expect('distinctId' in r && r.distinctId).toBe('42');
    const missing = parseDecideInput({ token: 't' }, {}, {});
    expect('error' in missing && missing.error.code).toBe('missing_distinct_id');
    const long = parseDecideInput({ token: 't', distinct_id: 'x'.repeat(1001) }, {}, {});
    expect('error' in long && long.error.code).toBe('malformed_data');
    const notObject = parseDecideInput([1, 2], {}, {});
    expect('error' in notObject && notObject.error.code).toBe('malformed_data');
  });

  it('reads the optional fields with Python truthiness', () => {
    const r = parseDecideInput(
      {
        token: 't',
        distinct_id: 'd',
        groups: { company: 'acme', team: 7, bad: {} },
        disable_flags: 'false',
        geoip_disable: 1,
        flag_keys_to_evaluate: ['a', 2, 'b'],
        $anon_distinct_id: 'anon',
      },
      {},
      {},
    );
    expect(r).toMatchObject({
      groups: { company: 'acme', team: '7' },
      disableFlags: false,
      geoipDisable: true,
      flagKeys: ['a', 'b'],
      anonDistinctId: 'anon',
    });
  });
});

describe('parseDecideInput bounds', () => {
  const parse = (extra: Record<string, unknown>) => {
    const r = parseDecideInput({ token: 't', distinct_id: 'd', ...extra }, {}, {});
    return 'token' in r ? 'ok' : r.error;
  };
  const entries = (n: number, value: (i: number) => unknown) =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, value(i)]));

  it('groups and group_properties: 100 entries at most; properties: 10,000 keys at most', () => {
    expect(parse({ groups: entries(100, String) })).toBe('ok');
    expect(parse({ groups: entries(101, String) })).toEqual({
      kind: 'validation',
      code: 'malformed_data',
      detail: 'groups has more than 100 entries',
      attr: 'groups',
    });
    expect(parse({ group_properties: entries(101, () => ({})) })).toMatchObject({
      attr: 'group_properties',
    });
    expect(parse({ person_properties: entries(10_000, String) })).toBe('ok');
    expect(parse({ person_properties: entries(10_001, String) })).toMatchObject({
      attr: 'person_properties',
      detail: 'person_properties has more than 10000 keys',
    });
    expect(parse({ group_properties: { company: entries(10_001, String) } })).toMatchObject({
      detail: 'group_properties.company has more than 10000 keys',
    });
  });
});

describe('decideVersion', () => {
  it('missing → 1, non-integer → 2, clamped to 1…4', () => {
    expect([undefined, '', '1', '2', '3', '4', '7', '0', 'x', '3.5'].map(decideVersion)).toEqual([
      1, 1, 1, 2, 3, 4, 4, 1, 2, 2,
    ]);
  });
});

describe('decideHashKeyOverrides', () => {
  it('records every (id, continuity flag) pair not yet recorded, and nothing when all are', () => {
    const input = {
      projectId: 1,
      hashKey: 'anon',
      distinctIds: ['user', 'anon'],
      continuityFlagKeys: ['f', 'g'],
      existing: new Set(['user\0f']),
    };
    expect(decideHashKeyOverrides(input)?.data.overrides).toEqual([
      { distinctId: 'user', flagKey: 'g' },
      { distinctId: 'anon', flagKey: 'f' },
      { distinctId: 'anon', flagKey: 'g' },
    ]);
    const all = new Set(['user\0f', 'user\0g', 'anon\0f', 'anon\0g']);
    expect(decideHashKeyOverrides({ ...input, existing: all })).toBeNull();
  });
});
