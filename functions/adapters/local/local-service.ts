import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { createApp } from '../../http/app.js';
import { VERSION } from '../../version.js';
import { bootstrapInstance } from '../../core/bootstrap.js';
import type { WorkerDeps } from '../../core/deps.js';
import { createLocalRunner } from '../../runtime/index.js';
import { SqliteStore } from './sqlite-store.js';
import { LocalFlowDriver } from './local-flow-driver.js';
import { LocalWorkerPool } from './worker-pool.js';
import { InProcessJobSignals } from '../in-process-job-signals.js';
import { FileBlobStore } from './file-blob-store.js';
import { AesSecretCipher } from './aes-secret-cipher.js';
import { loadOrCreateKeyFile } from './key-file.js';
import type { LocalConfig } from './config.js';


export interface RunningService {
  url: string;
  /** A new admin token, when this start created the instance; shown once. */
  newAdminToken: string | null;
  close(): Promise<void>;
}

/** The local shell: one process with the API, the worker pool and the sandboxed runner. */
export async function startLocalService(config: LocalConfig): Promise<RunningService> {
  // Only this process's user may read the database and uploads; jobs run as another user.
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  chmodSync(config.dataDir, 0o700);
  const store = new SqliteStore(join(config.dataDir, 'svc.db'));
  const runDir = mkdtempSync(join(tmpdir(), 'svc-run-'));
  chmodSync(runDir, 0o711);
  const runner = createLocalRunner({ workDir: runDir });
  const pool = new LocalWorkerPool(store, config.workers);
  const flows = new LocalFlowDriver();
  const clock = { now: () => new Date() };

  const { newAdminToken } = await bootstrapInstance(store, clock, {
    adminToken: config.adminToken,
    defaultWorkspaceId: config.defaultWorkspace,
  });

  const deps: WorkerDeps = {
    store,
    queue: pool,
    flows,
    signals: new InProcessJobSignals({ holdProcess: false }),
    blobs: new FileBlobStore(join(config.dataDir, 'objects')),
    // Its own key rather than the signing key: each can then be replaced without the other.
    cipher: AesSecretCipher.fromKeyFile(join(config.dataDir, 'secrets.key')),
    clock,
    runner,
    config: { ...config.core, baseInternalUrl: '', signingKey: loadOrCreateKeyFile(join(config.dataDir, 'signing.key')) },
  };
  const app = createApp(deps, { maxBodyBytes: config.maxBodyBytes, version: VERSION, sseKeepAliveMs: config.sseKeepAliveMs });
  const server = await listen(app.fetch, config.host, config.port);
  const port = (server.address() as AddressInfo).port;
  const url = `http://${config.host}:${port}`;
  deps.config.baseInternalUrl = config.baseUrl ?? url;

  // Jobs a crash left `running` are run again (at-least-once), then the pool takes the queue.
  await store.requeueInterrupted();
  pool.start(deps);
  await flows.start(deps);

  return {
    url,
    newAdminToken,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await flows.stop();
      await pool.stop();
      await runner.close();
      store.close();
      rmSync(runDir, { recursive: true, force: true });
    },
  };
}

function listen(fetch: (req: Request) => Response | Promise<Response>, hostname: string, port: number): Promise<ServerType> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, hostname, port }, () => resolve(server));
    server.once('error', reject);
  });
}
