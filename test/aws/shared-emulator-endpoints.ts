import { inject } from 'vitest';
import type { DynamoEndpoint } from './dynamodb-local.js';
import type { KmsEndpoint } from './kms-local.js';
import type { SharedEndpoints } from './shared-endpoints.js';
import type { SharedEmulator } from './shared-emulators.js';

/**
 * In a test worker: the endpoints of the run's shared DynamoDB Local and moto (shared-emulators.ts,
 * the globalSetup of the projects that use them), each started on the first request. Outside those
 * projects, or with SVC_TEST_AWS_ENDPOINT set, there is no broker and a test starts its own (or
 * uses the real endpoint) as the start functions do. The starters are imported only when used: the
 * http harness loads this module in every tier.
 */
export async function sharedEmulator(name: SharedEmulator): Promise<string | undefined> {
  const broker = inject('awsEmulatorBroker');
  if (!broker) return undefined;
  const res = await fetch(`${broker}/${name}`);
  const answer = await res.text();
  if (!res.ok) throw new Error(`the shared ${name} emulator did not start: ${answer}`);
  return answer;
}

/** For startAwsEmulators and the AWS shell server: the shared DynamoDB Local and moto, when this run shares them. */
export async function sharedEndpoints(): Promise<SharedEndpoints> {
  const [dynamodb, kms] = await Promise.all([sharedEmulator('dynamodb'), sharedEmulator('kms')]);
  return { dynamodb, kms };
}

/** The shared DynamoDB Local (its stop() leaves it running for the other files), else one of its own. */
export async function testDynamoDb(): Promise<DynamoEndpoint> {
  const endpoint = await sharedEmulator('dynamodb');
  if (endpoint) return { endpoint, stop: async () => {} };
  const { startDynamoDb } = await import('./dynamodb-local.js');
  return startDynamoDb();
}

/** The shared moto server (its stop() leaves it running for the other files), else one of its own. */
export async function testKms(): Promise<KmsEndpoint> {
  const endpoint = await sharedEmulator('kms');
  if (endpoint) return { endpoint, stop: async () => {} };
  const { startKms } = await import('./kms-local.js');
  return startKms();
}

/** The run's bundle of the AWS shell server, in the projects that build it (shared-emulators.ts). */
export function awsShellBundle(): string | undefined {
  return inject('awsShellBundle');
}
