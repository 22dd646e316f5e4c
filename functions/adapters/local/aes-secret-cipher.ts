import type { SecretCipher } from '../../ports.js';
import { formatCiphertext, KEY_BYTES, openText, parseCiphertext, sealText } from '../aes-gcm.js';
import { loadOrCreateKeyFile } from './key-file.js';

const SCHEME = 'aes256gcm';

/**
 * The local shell's secret cipher: AES-256-GCM under one key kept in the data directory, so the
 * database file alone does not reveal secrets. Ciphertext: `v1:aes256gcm:<iv>:<ciphertext+tag>`
 * (base64url parts), the context bound as associated data.
 */
export class AesSecretCipher implements SecretCipher {
  readonly #key: Uint8Array;

  constructor(key: Uint8Array) {
    if (key.length !== KEY_BYTES) throw new Error(`the secrets key must be ${KEY_BYTES} bytes`);
    this.#key = key;
  }

  /** The key in `file`, made on the first start (mode 0600) and read on every start after. */
  static fromKeyFile(file: string): AesSecretCipher {
    return new AesSecretCipher(loadOrCreateKeyFile(file, KEY_BYTES));
  }

  async encrypt(plaintext: string, context: Record<string, string>): Promise<string> {
    return formatCiphertext(SCHEME, sealText(this.#key, plaintext, context));
  }

  async decrypt(ciphertext: string, context: Record<string, string>): Promise<string> {
    const [iv, sealed] = parseCiphertext(ciphertext, SCHEME, 2);
    return openText(this.#key, iv, sealed, context);
  }
}
