/**
 * Hashing and random ids through Web Crypto, which both Node and Lambda provide, so the core
 * needs no runtime-specific import.
 */
const encoder = new TextEncoder();

export async function sha256Hex(text: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', encoder.encode(text));
  return Buffer.from(digest).toString('hex');
}

export function newUuid(): string {
  return globalThis.crypto.randomUUID();
}

/** A URL-safe random secret (256 bits). */
export function newSecret(): string {
  const bytes = new Uint8Array(32);
  globalThis.crypto.getRandomValues(bytes);
  return Buffer.from(bytes).toString('base64url');
}
