import { DecryptCommand, GenerateDataKeyCommand, InvalidCiphertextException, IncorrectKeyException, type KMSClient } from '@aws-sdk/client-kms';
import type { SecretCipher } from '../../ports.js';
import { formatCiphertext, openText, parseCiphertext, SecretDecryptionError, sealText } from '../aes-gcm.js';

const SCHEME = 'kms';

export interface KmsSecretCipherOptions {
  client: KMSClient;
  /** The customer-managed key (its ARN in the stack): it wraps every data key and must unwrap them. */
  keyId: string;
}

/**
 * The AWS shell's secret cipher: envelope encryption. Each secret gets a fresh AES-256 data key
 * from KMS; the secret is sealed locally with AES-256-GCM and only the KMS-encrypted data key is
 * kept beside it: `v1:kms:<encrypted data key>:<iv>:<ciphertext+tag>` (base64url parts). The
 * context is the KMS encryption context (so it shows in CloudTrail and IAM conditions may use it)
 * and the AES-GCM associated data, so neither the data key nor the ciphertext opens elsewhere.
 * Plaintexts and data keys are never logged, and data keys are zeroed once used.
 */
export class KmsSecretCipher implements SecretCipher {
  readonly #client: KMSClient;
  readonly #keyId: string;

  constructor(options: KmsSecretCipherOptions) {
    this.#client = options.client;
    this.#keyId = options.keyId;
  }

  async encrypt(plaintext: string, context: Record<string, string>): Promise<string> {
    const dataKey = await this.#client.send(
      new GenerateDataKeyCommand({ KeyId: this.#keyId, KeySpec: 'AES_256', EncryptionContext: context }),
    );
    if (!dataKey.Plaintext || !dataKey.CiphertextBlob) throw new Error('KMS GenerateDataKey returned no data key');
    try {
      return formatCiphertext(SCHEME, [dataKey.CiphertextBlob, ...sealText(dataKey.Plaintext, plaintext, context)]);
    } finally {
      dataKey.Plaintext.fill(0);
    }
  }

  async decrypt(ciphertext: string, context: Record<string, string>): Promise<string> {
    const [wrappedKey, iv, sealed] = parseCiphertext(ciphertext, SCHEME, 3);
    const dataKey = await this.#unwrap(wrappedKey, context);
    try {
      return openText(dataKey, iv, sealed, context);
    } finally {
      dataKey.fill(0);
    }
  }

  async #unwrap(wrappedKey: Uint8Array, context: Record<string, string>): Promise<Uint8Array> {
    try {
      // KeyId: KMS refuses a data key wrapped under any other key, instead of trusting the blob.
      const { Plaintext } = await this.#client.send(
        new DecryptCommand({ KeyId: this.#keyId, CiphertextBlob: wrappedKey, EncryptionContext: context }),
      );
      if (!Plaintext) throw new Error('KMS Decrypt returned no plaintext');
      return Plaintext;
    } catch (e) {
      // Altered blob, other context, other key: the same answer as a failed AES-GCM check.
      // Throttling, network and permission errors pass through as they are.
      if (e instanceof InvalidCiphertextException || e instanceof IncorrectKeyException) throw new SecretDecryptionError(e);
      throw e;
    }
  }
}
