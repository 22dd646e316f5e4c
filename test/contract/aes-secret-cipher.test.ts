import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AesSecretCipher } from '../../functions/adapters/local/aes-secret-cipher.js';
import { describeSecretCipherContract } from './secret-cipher.contract.js';

const dirs: string[] = [];
const dataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cipher-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describeSecretCipherContract('AesSecretCipher', async () => ({
  cipher: AesSecretCipher.fromKeyFile(join(dataDir(), 'secrets.key')),
  cleanup: async () => {},
}));

describe('AesSecretCipher key file', () => {
  const context = { workspace: 'main', path: 'u/alice/token' };

  it('is made on first use, 32 bytes readable by its owner only, and read again by the next instance', async () => {
    const file = join(dataDir(), 'secrets.key');
    const ciphertext = await AesSecretCipher.fromKeyFile(file).encrypt('kept across restarts', context);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const key = readFileSync(file);
    expect(key).toHaveLength(32);
    expect(ciphertext).toMatch(/^v1:aes256gcm:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$/);

    const restarted = AesSecretCipher.fromKeyFile(file);
    expect(await restarted.decrypt(ciphertext, context)).toBe('kept across restarts');
    expect(readFileSync(file).equals(key)).toBe(true);
  });

  it('cannot be opened with the key of another data directory', async () => {
    const ciphertext = await AesSecretCipher.fromKeyFile(join(dataDir(), 'secrets.key')).encrypt('mine', context);
    const other = AesSecretCipher.fromKeyFile(join(dataDir(), 'secrets.key'));
    await expect(other.decrypt(ciphertext, context)).rejects.toThrow(/could not be decrypted/);
  });

  it('refuses a key file of the wrong size instead of using it', () => {
    const file = join(dataDir(), 'secrets.key');
    writeFileSync(file, Buffer.alloc(16), { mode: 0o600 });
    expect(() => AesSecretCipher.fromKeyFile(file)).toThrow(/exactly 32 bytes/);
  });

  it('refuses text that UTF-8 cannot carry unchanged (a lone surrogate)', async () => {
    const cipher = AesSecretCipher.fromKeyFile(join(dataDir(), 'secrets.key'));
    await expect(cipher.encrypt('broken \ud800 pair', context)).rejects.toThrow(/well-formed/);
  });
});
