import { DEFAULT_RETRY_SCHEDULE } from '../core/events/retry-schedule.js';
import { DEFAULT_UPLOAD_SETTINGS } from '../core/uploads/upload-sessions.js';
import { randomBytes } from 'node:crypto';
import type { Hono } from 'hono';
import { createApp } from '../http/app.js';
import type { AppEnv } from '../http/context.js';
import { bootstrapInstance } from '../core/identity/bootstrap.js';
import type { CoreConfig, WorkerDeps } from '../core/deps.js';
import type { Clock, CodeRunner, EmailSender, TopicPublisher } from '../ports.js';
import { InProcessJobSignals } from '../adapters/in-process-job-signals.js';
import { AesSecretCipher } from '../adapters/local/aes-secret-cipher.js';
import { MemoryStore } from '../adapters/memory/memory-store.js';
import { MemoryBlobStore } from '../adapters/memory/memory-blob-store.js';
import { MemoryJobQueue } from '../adapters/memory/memory-job-queue.js';
import { MemoryFlowDriver } from '../adapters/memory/memory-flow-driver.js';
import { PendingWork } from '../adapters/memory/pending-work.js';
import { OutboundHttp } from '../adapters/outbound-http.js';

export interface MemoryServiceOptions {
  /** What runs user code: the real local runner, or a test double of the port. */
  runner: CodeRunner;
  clock: Clock;
  /** Accepted as the admin's API token, as SVC_ADMIN_TOKEN is. */
  adminToken: string;
  defaultWorkspace?: string;
  email?: EmailSender | null;
  /** SNS for ConsentGate notices, as the AWS shell has it. */
  topics?: TopicPublisher | null;
  /** Whether outbound webhooks may reach loopback and private addresses (the tests' receivers are on 127.0.0.1). */
  webhookAllowPrivate?: boolean;
  config?: Partial<CoreConfig>;
  maxBodyBytes?: number;
}

export interface MemoryService {
  deps: WorkerDeps;
  store: MemoryStore;
  flows: MemoryFlowDriver;
  /** The same Hono app the local server and the Lambda handler serve; call `app.request()`. */
  app: Hono<AppEnv>;
  /** Resolves once every job and flow step set in motion has finished; throws what failed. */
  settled(): Promise<void>;
}

/**
 * The whole service in one process and in memory: the core and the HTTP app wired to in-memory
 * adapters, with nothing listening and nothing on disk. It is what the fast test tier runs
 * against; user code runs in whatever `runner` is given.
 */
export async function createMemoryService(opts: MemoryServiceOptions): Promise<MemoryService> {
  const work = new PendingWork();
  const store = new MemoryStore();
  const queue = new MemoryJobQueue(work);
  const flows = new MemoryFlowDriver(work);
  const signingKey = randomBytes(32);
  await bootstrapInstance(store, opts.clock, { adminToken: opts.adminToken, defaultWorkspaceId: opts.defaultWorkspace ?? 'main', signingKey });
  const deps: WorkerDeps = {
    store,
    queue,
    flows,
    signals: new InProcessJobSignals({ holdProcess: false }),
    blobs: new MemoryBlobStore(),
    cipher: new AesSecretCipher(randomBytes(32)),
    email: opts.email ?? null,
    topics: opts.topics ?? null,
    outbound: new OutboundHttp({ allowPrivate: opts.webhookAllowPrivate ?? true }),
    clock: opts.clock,
    runner: opts.runner,
    config: {
      baseInternalUrl: 'http://svc.invalid',
      jobTimeoutMs: 60_000,
      maxOutputBytes: 1024 * 1024,
      syncMaxWaitMs: 10_000,
      includeHeaders: [],
      signingKey,
      pollIntervalMs: 1000,
      webhookRetry: DEFAULT_RETRY_SCHEDULE,
      uploads: DEFAULT_UPLOAD_SETTINGS,
      ...opts.config,
    },
  };
  queue.start(deps);
  flows.start(deps);
  const app = createApp(deps, { maxBodyBytes: opts.maxBodyBytes ?? 10 * 1024 * 1024, version: 'test', sseKeepAliveMs: 15_000 });
  return { deps, store, flows, app, settled: () => work.settled() };
}
