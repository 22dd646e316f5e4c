import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM as both secret ciphers use it: the local one with the key file of the data directory,
 * the KMS one with a fresh data key per secret. Also the text form their ciphertexts take:
 * `v1:<scheme>:<part>:<part>...`, each part base64url, so a stored value says how to open it.
 */

export const KEY_BYTES = 32;
/** 96 bits, GCM's native IV size; random per message, so one key stays safe for 2^32 messages. */
const IV_BYTES = 12;
const TAG_BYTES = 16;
const VERSION = 'v1';

/** Thrown for any ciphertext that does not open: altered, truncated, another key or another context. */
export class SecretDecryptionError extends Error {
  constructor(cause?: unknown) {
    // Says nothing about the ciphertext or the key: the message may end up in a log.
    super('the secret could not be decrypted: it was altered, or belongs to another key or context', { cause });
    this.name = 'SecretDecryptionError';
  }
}

/** Encrypts `plaintext` under `key` with `context` as associated data; returns [iv, ciphertext ‖ tag]. */
export function sealText(key: Uint8Array, plaintext: string, context: Record<string, string>): [Buffer, Buffer] {
  // UTF-8 would turn a lone surrogate into U+FFFD, and the secret would not come back as given.
  if (/\p{Cs}/u.test(plaintext)) throw new TypeError('a secret must be well-formed Unicode text');
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(contextAad(context));
  const data = Buffer.from(plaintext, 'utf8');
  try {
    return [iv, Buffer.concat([cipher.update(data), cipher.final(), cipher.getAuthTag()])];
  } finally {
    data.fill(0);
  }
}

/** The inverse of `sealText`; throws SecretDecryptionError unless key, context and bytes all match. */
export function openText(key: Uint8Array, iv: Buffer, sealed: Buffer, context: Record<string, string>): string {
  if (iv.length !== IV_BYTES || sealed.length < TAG_BYTES) throw new SecretDecryptionError();
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(contextAad(context));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    const data = Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]);
    try {
      return data.toString('utf8');
    } finally {
      data.fill(0);
    }
  } catch (e) {
    throw new SecretDecryptionError(e);
  }
}

/**
 * The context as bytes that do not depend on the order its keys were written in: sorted
 * [key, value] pairs as JSON (pairs, not an object, so integer-like keys keep the sorted order).
 */
export function contextAad(context: Record<string, string>): Buffer {
  const pairs = Object.entries(context).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Buffer.from(JSON.stringify(pairs), 'utf8');
}

export function formatCiphertext(scheme: string, parts: Uint8Array[]): string {
  return [VERSION, scheme, ...parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength).toString('base64url'))].join(':');
}

/** The parts of a `formatCiphertext` string of this scheme; throws SecretDecryptionError for anything else. */
export function parseCiphertext(text: string, scheme: string, partCount: number): Buffer[] {
  const [version, found, ...parts] = text.split(':');
  if (version !== VERSION || found !== scheme || parts.length !== partCount) throw new SecretDecryptionError();
  return parts.map((part) => {
    const bytes = Buffer.from(part, 'base64url');
    // Node's decoder skips stray characters and ignores unused low bits: only the canonical
    // spelling is accepted, so that any change to the text is a change to the bytes.
    if (bytes.toString('base64url') !== part) throw new SecretDecryptionError();
    return bytes;
  });
}
