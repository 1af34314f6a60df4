import { describe, expect, it } from 'vitest';
import { clientIp, flatQuery } from '../../ingress/requestContext.ts';

describe('clientIp', () => {
  it('takes the first X-Forwarded-For hop', () => {
    expect(clientIp({ 'x-forwarded-for': '203.0.113.7, 10.0.0.1, 10.0.0.2' }, '10.0.0.3')).toBe(
      '203.0.113.7',
    );
  });

  it('strips an IPv4 port but keeps IPv6 addresses whole', () => {
    expect(clientIp({ 'x-forwarded-for': '203.0.113.7:51234, 10.0.0.1' }, undefined)).toBe(
      '203.0.113.7',
    );
    expect(clientIp({ 'x-forwarded-for': '2001:db8::1, 10.0.0.1' }, undefined)).toBe('2001:db8::1');
    expect(clientIp({ 'x-forwarded-for': '[2001:db8::1]:443' }, undefined)).toBe('2001:db8::1');
  });

  it('reads the header case-insensitively and accepts repeated headers', () => {
    expect(clientIp({ 'X-Forwarded-For': '198.51.100.1' }, undefined)).toBe('198.51.100.1');
    expect(clientIp({ 'x-forwarded-for': ['198.51.100.2', '10.0.0.1'] }, undefined)).toBe(
      '198.51.100.2',
    );
  });

  it('falls back to the socket address, unmapping IPv4-mapped IPv6', () => {
    expect(clientIp({}, '::ffff:192.0.2.10')).toBe('192.0.2.10');
    expect(clientIp({ 'x-forwarded-for': '  ' }, '2001:db8::2')).toBe('2001:db8::2');
    expect(clientIp({ 'x-forwarded-for': undefined }, '192.0.2.11')).toBe('192.0.2.11');
    expect(clientIp({ 'x-forwarded-for': '::ffff:192.0.2.12' }, undefined)).toBe('192.0.2.12');
  });

  it('returns null when there is no address at all', () => {
    expect(clientIp({}, undefined)).toBeNull();
    expect(clientIp({}, '')).toBeNull();
  });
});

describe('flatQuery', () => {
  it('keeps the first of a repeated parameter, as text; an absent value stays absent', () => {
    expect(flatQuery({ v: ['3', '4'], n: 7, token: 'phc_x', gone: undefined })).toEqual({
      v: '3',
      n: '7',
      token: 'phc_x',
      gone: undefined,
    });
    expect(flatQuery(undefined)).toEqual({});
  });
});
