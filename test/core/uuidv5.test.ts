import { v5 } from 'uuid';
import { describe, expect, it } from 'vitest';
import { uuidv5 } from '../../src/core/uuidv5.ts';

describe('uuidv5', () => {
  it('matches the uuid package (RFC 4122) and PostHog’s person UUIDs', () => {
    const ns = '932979b4-65c3-4424-8467-0b66ec27bc22';
    for (const name of ['1:abc', '2:user@example.com', '7:ünïcødé', ''])
      expect(uuidv5(name, ns)).toBe(v5(name, ns));
    expect(uuidv5('1:abc', ns)).toBe('07738276-ab30-525b-9ece-796064758bd4');
  });
});
