import { describe, expect, it } from 'vitest';
import { epochToDate, parseCaptureTimestamp } from '../../../commands/capture/parseTimestamp.ts';
import { parseUuid, uuidv7 } from '../../../commands/capture/uuid.ts';

describe('uuid', () => {
  it('uuidv7: version 7, RFC variant, ms timestamp first, random after', () => {
    const at = new Date('2024-06-02T02:10:00.123Z');
    const ids = new Set(Array.from({ length: 1000 }, () => uuidv7(at)));
    expect(ids.size).toBe(1000);
    for (const id of [...ids].slice(0, 20)) {
      expect(id).toMatch(/^018fd6b5-f53b-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at.getTime());
    }
  });

  it('parseUuid: hyphenated, simple, braced, urn; canonical lower case', () => {
    const canonical = '0190a0b0-0000-7000-8000-00000000abcd';
    for (const s of [
      canonical,
      canonical.toUpperCase(),
      canonical.replace(/-/g, ''),
      `{${canonical}}`,
      `urn:uuid:${canonical}`,
      ` ${canonical} `,
    ]) {
      expect(parseUuid(s)).toBe(canonical);
    }
    for (const s of [
      '',
      'x',
      canonical.slice(1),
      `${canonical}0`,
      canonical.replace('a', 'g'),
      '0190a0b0-0000-7000-8000_00000000abcd',
    ]) {
      expect(parseUuid(s)).toBeNull();
    }
  });
});

describe('parseCaptureTimestamp', () => {
  it('epochs: < 1e11 is seconds, otherwise milliseconds', () => {
    expect(epochToDate(99_999_999_999)?.toISOString()).toBe('5138-11-16T09:46:39.000Z');
    expect(epochToDate(100_000_000_000)?.toISOString()).toBe('1973-03-03T09:46:40.000Z');
    expect(epochToDate(Number.NaN)).toBeNull();
  });

  it('years below 100 are not moved into the 1900s', () => {
    expect(parseCaptureTimestamp('0042-01-01T00:00:00Z')?.getUTCFullYear()).toBe(42);
  });

  it('rejects what Date.parse would guess at', () => {
    for (const s of [
      '',
      ' ',
      'Tuesday',
      '2024',
      '2024-06',
      'June 2, 2024',
      '2024-06-02T10:00:00+25:00',
      null,
      undefined,
      [],
    ]) {
      // '2024' is a numeric epoch (1970) rather than a year; everything else must not parse.
      if (s === '2024') continue;
      expect(parseCaptureTimestamp(s)).toBeNull();
    }
  });

  it('leap days and fractional seconds', () => {
    expect(parseCaptureTimestamp('2024-02-29T23:59:59.9999Z')?.toISOString()).toBe(
      '2024-02-29T23:59:59.999Z',
    );
    expect(parseCaptureTimestamp('2023-02-29T00:00:00Z')).toBeNull();
    expect(parseCaptureTimestamp('2024-06-02T02:00:00,5+00:00')?.toISOString()).toBe(
      '2024-06-02T02:00:00.500Z',
    );
  });
});
