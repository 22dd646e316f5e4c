import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { createApp } from '../http/app.js';
import { VERSION } from '../version.js';
import { bootstrapInstance } from '../core/identity/bootstrap.js';
import { CachedStore } from '../core/store/cached-store.js';
import type { WorkerDeps } from '../core/deps.js';
import { createLocalRunner } from '../runtime/index.js';
import { createRunFolder } from '../runtime/run-folder.js';
import { describeDeno } from '../runtime/deno-binary.js';
import { describeGo, GoCompiler } from '../runtime/go-build.js';
import { Confiner } from '../runtime/confinement.js';
import { localDependencies } from '../runtime/dependencies/local-installers.js';
import { SqliteStore } from '../adapters/local/sqlite-store.js';
import { BackgroundCheckpoints } from '../adapters/local/sqlite-checkpointer.js';
import { LocalFlowDriver } from '../adapters/local/local-flow-driver.js';
import { LocalWorkerPool } from '../adapters/local/worker-pool.js';
import { InProcessJobSignals } from '../adapters/in-process-job-signals.js';
import { FileBlobStore } from '../adapters/local/file-blob-store.js';
import { AesSecretCipher } from '../adapters/local/aes-secret-cipher.js';
import { loadOrCreateKeyFile } from '../adapters/local/key-file.js';
import { sweepTokens } from '../core/identity/token-expiry.js';
import { pruneFinishedJobs } from '../core/console/retention.js';
import { OutboundHttp } from '../adapters/outbound-http.js';
import { startEventDispatcher } from '../adapters/local/event-dispatcher.js';
import { startScheduleTicker } from '../adapters/local/schedule-ticker.js';
import { settleOutcomes } from '../core/jobs/job-outcome.js';
import { startPeriodic } from '../adapters/local/periodic-task.js';
import { sweepConcurrencySlots } from '../core/jobs/concurrency.js';
import { pruneExpiredResults } from '../core/jobs/result-cache.js';
import type { LocalConfig } from '../adapters/local/config.js';
import { log } from '../core/common/logger.js';
import { guardConnections, type ConnectionLimits } from '../adapters/local/connection-guard.js';


export interface RunningService {
  url: string;
  /** Whether this start created the instance (its default workspace and the admin). */
  created: boolean;
  /** A new admin token, when this start created the instance without SVC_ADMIN_TOKEN; shown once. */
  newAdminToken: string | null;
  close(): Promise<void>;
}

/** The local shell: one process with the API, the worker pool and the sandboxed runner. */
export async function startLocalService(config: LocalConfig): Promise<RunningService> {
  // Jobs never see the data dir (database, key files, uploads) nor anything of this process.
  // The dependency cache is hidden too: a job sees its own version's tree only, read-only.
  // What confinement this machine allows is asked of it (child processes) while SQLite opens.
  const probing = Confiner.probe({ limits: config.jobLimits, uidRange: config.jobUidRange, hiddenPaths: [config.dataDir, config.dependencies.cacheDir], network: config.jobNetwork });
  // Only this process's user may read the database and uploads; jobs run as another user.
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  chmodSync(config.dataDir, 0o700);
  const dbFile = join(config.dataDir, 'svc.db');
  const store = new SqliteStore(dbFile);
  // Commits only append to the WAL; copying it into the database happens off the request path.
  const checkpoints = BackgroundCheckpoints.start(store.db, dbFile);
  const runDir = createRunFolder();
  const confiner = await probing;
  const dependencies = localDependencies(confiner, config.dependencies);
  console.error(`svc runtime: ${confiner.describe()}\n  ${describeDeno()}\n  ${describeGo()}\n  ${dependencies.description}`);
  // Go binaries are built at create into the data dir, which jobs never see; a job gets a copy.
  const goCacheDir = join(config.dataDir, 'go');
  const compiler = new GoCompiler({ cacheDir: goCacheDir, moduleProxy: config.goModuleProxy });
  const runner = createLocalRunner({
    workDir: runDir,
    confiner,
    maxWarmTotal: config.maxWarmTotal,
    warmMemoryBytes: config.warmMemoryBytes,
    sparesPerKey: config.warmSpares,
    goCacheDir,
    dependencies,
  });
  const pool = new LocalWorkerPool(store, config.workers);
  const flows = new LocalFlowDriver();
  const clock = { now: () => new Date() };
  // nodemailer is loaded only where email is configured.
  const email = config.smtpUrl ? new (await import('../adapters/local/smtp-email-sender.js')).SmtpEmailSender(config.smtpUrl, config.smtpFrom) : null;
  const outbound = new OutboundHttp({ allowPrivate: config.webhookAllowPrivate });

  const signingKey = loadOrCreateKeyFile(join(config.dataDir, 'signing.key'));
  const { created, newAdminToken } = await bootstrapInstance(store, clock, {
    adminToken: config.adminToken,
    defaultWorkspaceId: config.defaultWorkspace,
    signingKey,
  });

  const deps: WorkerDeps = {
    // The rows every request reads (token, user, workspace, settings, path heads) for a moment.
    store: new CachedStore(store),
    queue: pool,
    flows,
    signals: new InProcessJobSignals({ holdProcess: false }),
    blobs: new FileBlobStore(join(config.dataDir, 'objects')),
    // Its own key rather than the signing key: each can then be replaced without the other.
    cipher: AesSecretCipher.fromKeyFile(join(config.dataDir, 'secrets.key')),
    email,
    outbound,
    clock,
    runner,
    compiler,
    dependencies,
    config: { ...config.core, baseInternalUrl: '', signingKey },
  };
  const app = createApp(deps, { maxBodyBytes: config.maxBodyBytes, version: VERSION, sseKeepAliveMs: config.sseKeepAliveMs, sseMaxMs: config.sseMaxMs, runtime: confiner.status, streamsBodies: true, http1: true });
  const server = await listen(app.fetch, config.host, config.port, config.connections);
  const port = (server.address() as AddressInfo).port;
  const url = `http://${config.host}:${port}`;
  deps.config.baseInternalUrl = config.baseUrl ?? url;

  // Jobs a crash left `running` are run again (at-least-once), then the pool takes the queue.
  await store.requeueInterrupted();
  pool.start(deps);
  await flows.start(deps);
  // Deletes expired tokens and sends expiry notices (spec 3, 5.8).
  const sweeper = startPeriodic('token sweep', config.tokenSweepMs, async () => {
    const report = await sweepTokens(deps);
    if (report.noticed || report.deleted) log.info('token sweep', { ...report });
  });
  const pruner = startPeriodic('retention prune', RETENTION_PRUNE_MS, async () => {
    const report = await pruneFinishedJobs(deps);
    if (report.scrubbed) log.info('retention prune', { ...report });
    const expired = await pruneExpiredResults(deps);
    if (expired) log.info('result cache prune', { expired });
  });
  // Lets go of runs waiting for a concurrency slot that a time window (or an unseen end) freed.
  const slots = startPeriodic('concurrency slots', CONCURRENCY_SWEEP_MS, async () => {
    const released = await sweepConcurrencySlots(deps);
    if (released) log.info('concurrency slots', { released });
  });
  // Counts the scheduled runs a stop left uncounted, and starts the handlers (a schedule's, the
  // workspace error handler) a stop left unstarted.
  const outcomes = startPeriodic('outcome sweep', OUTCOME_SWEEP_MS, async () => {
    const report = await settleOutcomes(deps, deps.clock.now());
    if (Object.values(report).some(Boolean)) log.info('outcome sweep', { ...report });
  });
  const dispatcher = startEventDispatcher({ ...deps, retry: deps.config.webhookRetry, sender: outbound }, config.webhookPollMs);
  const ticker = startScheduleTicker(deps, config.scheduleTickMs);

  return {
    url,
    created,
    newAdminToken,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await ticker.stop();
      await sweeper.stop();
      await pruner.stop();
      await slots.stop();
      await outcomes.stop();
      await dispatcher.stop();
      email?.close();
      await flows.stop();
      await pool.stop();
      await runner.close();
      await dependencies.close();
      await checkpoints.stop();
      store.close();
      rmSync(runDir, { recursive: true, force: true });
    },
  };
}

/** How often finished jobs past their workspace's retention are pruned (README: Console, Retention). */
const RETENTION_PRUNE_MS = 5 * 60_000;
/** How often runs waiting for a concurrency slot are checked for a slot a time window freed. */
const CONCURRENCY_SWEEP_MS = 1000;
/** How often finished runs are checked for an outcome left uncounted or a handler left unstarted (each gets 30 s to do it itself first). */
const OUTCOME_SWEEP_MS = 10_000;

function listen(fetch: (req: Request) => Response | Promise<Response>, hostname: string, port: number, connections: ConnectionLimits): Promise<ServerType> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, hostname, port }, () => resolve(server));
    guardConnections(server as import('node:http').Server, connections);
    // Node's default gives a whole request 5 minutes; an upload part or a multipart webhook of
    // gigabytes takes as long as the link needs. Headers must still arrive within headersTimeout.
    (server as import('node:http').Server).requestTimeout = 0;
    server.once('error', reject);
  });
}
