import { createHash, randomBytes, randomUUID } from 'node:crypto';

/** Hashing and random ids. node:crypto is synchronous and available on Node and Lambda alike. */

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function newUuid(): string {
  return randomUUID();
}

/** A URL-safe random secret (256 bits). */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}
