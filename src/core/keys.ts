import { createHash, randomBytes } from 'node:crypto';

/** Keys are stored only as this hash; the raw key is shown once, when it is created. */
export const hashKey = (raw: string) => createHash('sha256').update(raw, 'utf8').digest('hex');

export const generateKey = (prefix: 'phc' | 'phx') =>
  `${prefix}_${randomBytes(24).toString('base64url')}`;

/** What the API may show of a key: its prefix and last four characters. */
export const maskKey = (raw: string) => `${raw.slice(0, 4)}...${raw.slice(-4)}`;
