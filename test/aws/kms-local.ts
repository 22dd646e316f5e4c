import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { CreateKeyCommand, KMSClient, ListKeysCommand, ScheduleKeyDeletionCommand } from '@aws-sdk/client-kms';
import { externalEndpoint } from './dynamodb-local.js';
import { clientConfig } from './emulator-endpoints.js';
import { collectOutput } from './child-output.js';

/**
 * KMS for the aws tier: moto's server (python3, `import moto`; the machine image has moto 5 for
 * its python3, Debian packages none) on a free loopback port, in memory, or whatever
 * SVC_TEST_AWS_ENDPOINT names. moto binds the encryption context to its data keys as KMS does,
 * but does not check Decrypt's KeyId against the key that wrapped a data key.
 */
export interface KmsEndpoint {
  endpoint: string;
  /** The emulator's process id; absent for an external endpoint. */
  pid?: number;
  stop(): Promise<void>;
}

const STARTUP_TIMEOUT_MS = 30_000;

/**
 * Exits when its standard input closes, which happens however the test process ends (a crashed
 * or killed worker runs no afterAll hook): the emulator never outlives whoever started it.
 * Port 0: the server binds a free port itself and prints it, so no port can be taken in between.
 */
const MOTO_WITH_LIFELINE = `
import os, sys, threading
def lifeline():
    sys.stdin.buffer.read()
    os._exit(0)
threading.Thread(target=lifeline, daemon=True).start()
from moto.server import main
main(["-H", "127.0.0.1", "-p", "0"])
`;

export async function startKms(): Promise<KmsEndpoint> {
  const external = externalEndpoint();
  if (external) return { endpoint: external, stop: async () => {} };

  const moto = spawn('python3', ['-c', MOTO_WITH_LIFELINE], { stdio: ['pipe', 'pipe', 'pipe'] });
  // Neither the process nor its pipes may keep the test process alive on their own.
  moto.unref();
  for (const stream of [moto.stdin, moto.stdout, moto.stderr]) (stream as unknown as Socket | null)?.unref?.();
  let spawnError: Error | null = null;
  moto.once('error', (e) => (spawnError = e));
  const output = collectOutput(moto);
  const stop = () => killAndWait(moto);

  try {
    const deadline = Date.now() + STARTUP_TIMEOUT_MS;
    let port: string | undefined;
    for (;;) {
      if (spawnError) throw new Error(`could not start python3 for moto: ${(spawnError as Error).message}`);
      if (moto.exitCode !== null || moto.signalCode !== null) {
        const text = output();
        const hint = /No module named 'moto'|No module named 'flask/.test(text) ? ' (moto with its server extras is not installed for python3; see .ci/run)' : '';
        throw new Error(`the moto KMS emulator exited (${moto.exitCode ?? moto.signalCode}) during start-up${hint}:\n${text}`);
      }
      if (Date.now() > deadline) throw new Error(`the moto KMS emulator did not answer within ${STARTUP_TIMEOUT_MS / 1000}s:\n${output()}`);
      port ??= /Running on http:\/\/127\.0\.0\.1:(\d+)/.exec(output())?.[1];
      if (port && (await answers(`http://127.0.0.1:${port}`))) return { endpoint: `http://127.0.0.1:${port}`, pid: moto.pid, stop };
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (e) {
    await stop();
    throw e;
  }
}

export function kmsClient(endpoint: string): KMSClient {
  return new KMSClient(clientConfig(endpoint));
}

export interface TestKey {
  keyId: string;
  /** What the stack passes as SECRETS_KMS_KEY_ID. */
  keyArn: string;
  drop(): Promise<void>;
}

/** A symmetric key of its own, like the stack's; scheduled for deletion afterwards (7 days is the least KMS allows). */
export async function createTestKey(client: KMSClient): Promise<TestKey> {
  const { KeyMetadata } = await client.send(
    new CreateKeyCommand({ KeySpec: 'SYMMETRIC_DEFAULT', KeyUsage: 'ENCRYPT_DECRYPT', Description: 'svc test: secret variables' }),
  );
  const keyId = KeyMetadata!.KeyId!;
  return {
    keyId,
    keyArn: KeyMetadata!.Arn!,
    drop: async () => void (await client.send(new ScheduleKeyDeletionCommand({ KeyId: keyId, PendingWindowInDays: 7 }))),
  };
}

async function answers(endpoint: string): Promise<boolean> {
  const client = kmsClient(endpoint);
  try {
    await client.send(new ListKeysCommand({}), { abortSignal: AbortSignal.timeout(2_000) });
    return true;
  } catch {
    return false;
  } finally {
    client.destroy();
  }
}


async function killAndWait(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // In memory only: nothing to flush, so no reason to wait for a graceful stop.
  child.kill('SIGKILL');
  await exited;
}
