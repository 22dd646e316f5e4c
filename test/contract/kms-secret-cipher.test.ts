import type { KMSClient } from '@aws-sdk/client-kms';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KmsSecretCipher } from '../../functions/adapters/aws/kms-secret-cipher.js';
import { createTestKey, kmsClient, startKms, type KmsEndpoint } from '../aws/kms-local.js';
import { testKms } from '../aws/shared-emulator-endpoints.js';
import { describeSecretCipherContract } from './secret-cipher.contract.js';

// moto's KMS (the run's shared one) by default; LocalStack or a real account when SVC_TEST_AWS_ENDPOINT is set.
let kms: KmsEndpoint | undefined;
let client: KMSClient;

beforeAll(async () => {
  kms = await testKms();
  client = kmsClient(kms.endpoint);
});

afterAll(async () => {
  client?.destroy();
  await kms?.stop();
});

describeSecretCipherContract('KmsSecretCipher', async () => {
  const key = await createTestKey(client);
  return { cipher: new KmsSecretCipher({ client, keyId: key.keyArn }), cleanup: () => key.drop() };
});

describe('KmsSecretCipher envelope', () => {
  it('keeps the KMS-wrapped data key beside the AES-GCM ciphertext', async () => {
    const key = await createTestKey(client);
    try {
      const ciphertext = await new KmsSecretCipher({ client, keyId: key.keyArn }).encrypt('wrapped', { workspace: 'main', path: 'f/x' });
      const [version, scheme, wrappedKey, iv, sealed] = ciphertext.split(':');
      expect([version, scheme]).toEqual(['v1', 'kms']);
      // An encrypted data key is far longer than the 32 bytes of the key it wraps.
      expect(Buffer.from(wrappedKey, 'base64url').length).toBeGreaterThan(32);
      expect(Buffer.from(iv, 'base64url')).toHaveLength(12);
      expect(Buffer.from(sealed, 'base64url')).toHaveLength('wrapped'.length + 16);
    } finally {
      await key.drop();
    }
  });

  it('stops the process it started', async () => {
    const own = await startKms();
    if (own.pid === undefined) return; // an external endpoint: nothing was started
    await own.stop();
    expect(() => process.kill(own.pid!, 0)).toThrow();
  });
});
