import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VERSION } from '../../src/version.ts';

const read = (file: string) => fs.readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

describe('the version', () => {
  it('is the same in package.json, the lock file, the served API document and the changelog', () => {
    expect(JSON.parse(read('package.json')).version).toBe(VERSION);
    expect(JSON.parse(read('package-lock.json')).version).toBe(VERSION);
    expect(read('CHANGELOG.md')).toMatch(
      new RegExp(`^## \\[${VERSION.replaceAll('.', '\\.')}\\] - \\d{4}-\\d{2}-\\d{2}$`, 'm'),
    );
  });
});
