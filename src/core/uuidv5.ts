import { createHash } from 'node:crypto';

/**
 * RFC 4122 name-based UUID (v5) with node's native SHA-1. The uuid package's v5 resolves to its
 * portable JavaScript SHA-1 under ESM, which showed up as several per cent of capture CPU.
 */
export function uuidv5(name: string, namespace: string): string {
  const hash = createHash('sha1')
    .update(Buffer.from(namespace.replace(/-/g, ''), 'hex'))
    .update(name, 'utf8')
    .digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.toString('hex', 0, 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
