import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestProject } from 'vitest/node';
import { externalEndpoint, startDynamoDb } from './dynamodb-local.js';
import { startKms } from './kms-local.js';
import { bundleAwsShell } from './aws-shell-bundle.js';

/**
 * vitest globalSetup of the projects that run the AWS shell or its adapters on emulators
 * (vitest.config.ts): DynamoDB Local (a JVM) and moto's server (python) are started once per test
 * run and shared by every test file, instead of once per AWS shell server: starting them took
 * most of each server's start-up. Each file still makes its own table and key (unique names), so
 * sharing the processes shares no data. Each emulator starts on the first request for it, so a run
 * that needs neither (`--project node test/unit/runtime/...`) starts nothing.
 *
 * The workers ask a loopback broker in this process for an endpoint (shared-emulator-endpoints.ts),
 * which starts the emulator then. The emulators stop with the run's last teardown, and when this
 * process dies however it dies (each one's own lifeline: dynamodb-local.ts, kms-local.ts).
 * Tests of an emulator's own start, stop or death start a private one, as before.
 */

declare module 'vitest' {
  export interface ProvidedContext {
    /** The broker's URL; absent when nothing is shared (SVC_TEST_AWS_ENDPOINT). */
    awsEmulatorBroker?: string;
    /** The AWS shell server bundled for this run (aws-shell-bundle.ts), which the http harness starts. */
    awsShellBundle?: string;
  }
}

export type SharedEmulator = 'dynamodb' | 'kms';

interface Broker {
  url: string;
  /** Projects whose teardown has not run yet: the last one stops the emulators. */
  users: number;
  close(): Promise<void>;
}

const STARTERS: Record<SharedEmulator, () => Promise<{ endpoint: string; stop(): Promise<void> }>> = {
  dynamodb: () => startDynamoDb(),
  kms: () => startKms(),
};

/** Each project loads this file as a module of its own: the one broker of the run lives here. */
const RUN_BROKER = Symbol.for('svc.test.awsEmulatorBroker');
/** Likewise the run's one bundle of the AWS shell server, built before the first project's tests. */
const RUN_BUNDLE = Symbol.for('svc.test.awsShellBundle');
type WithBroker = typeof globalThis & { [RUN_BROKER]?: Promise<Broker>; [RUN_BUNDLE]?: Promise<string> };

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const run = globalThis as WithBroker;
  run[RUN_BUNDLE] ??= bundleAwsShell();
  project.provide('awsShellBundle', await run[RUN_BUNDLE]);
  // A real endpoint (LocalStack, an account) is used as it is; there is nothing to start.
  if (externalEndpoint()) return async () => {};
  run[RUN_BROKER] ??= startBroker();
  const broker = await run[RUN_BROKER];
  broker.users += 1;
  project.provide('awsEmulatorBroker', broker.url);
  return async () => {
    broker.users -= 1;
    if (broker.users > 0) return;
    delete run[RUN_BROKER];
    await broker.close();
  };
}

async function startBroker(): Promise<Broker> {
  const started = new Map<SharedEmulator, ReturnType<(typeof STARTERS)[SharedEmulator]>>();
  const server = createServer((req, res) => {
    const name = req.url?.slice(1) as SharedEmulator;
    if (!Object.hasOwn(STARTERS, name)) {
      res.writeHead(404).end(`no emulator named ${req.url}`);
      return;
    }
    // Started once: every later request (and a failed start's error) gets the same answer.
    if (!started.has(name)) started.set(name, STARTERS[name]());
    started.get(name)!.then(
      ({ endpoint }) => res.writeHead(200, { 'content-type': 'text/plain' }).end(endpoint),
      (error: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(error instanceof Error ? error.message : String(error)),
    );
  });
  // Never what keeps the run's process alive.
  server.unref();
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => done());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    users: 0,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
      await Promise.allSettled([...started.values()].map(async (emulator) => (await emulator).stop()));
    },
  };
}
