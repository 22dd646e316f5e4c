import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';

/**
 * A random key kept in a file of the data directory (the signing key, the secrets key): made on
 * the first start, readable by this user only, read on every start after. Never logged.
 */
export function loadOrCreateKeyFile(file: string, bytes = 32): Uint8Array {
  try {
    // `wx`: of two processes starting on a fresh data directory, only one writes the key.
    writeFileSync(file, randomBytes(bytes), { mode: 0o600, flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  const key = new Uint8Array(readFileSync(file));
  // A truncated or foreign file must stop the start, not become a weaker or different key.
  if (key.length !== bytes) throw new Error(`${file} must hold exactly ${bytes} bytes; it holds ${key.length}`);
  return key;
}
