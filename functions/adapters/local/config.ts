import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { CoreConfig } from '../../core/deps.js';
import { retryScheduleFromEnv } from '../../core/events/retry-schedule.js';
import { uploadSettingsFromEnv } from '../../core/uploads/upload-sessions.js';
import { DEFAULT_MAX_QUEUED_JOBS_PER_WORKSPACE, DEFAULT_MAX_RUN_DEPTH } from '../../core/jobs/run-admission.js';
import { maxJobsPerRunFromEnv } from '../../core/jobs/run-budget.js';
import { limitsFromEnv, uidRangeFromEnv, type ResourceLimits } from '../../runtime/job-limits.js';
import { networkFromEnv, type NetworkSetting } from '../../runtime/job-network.js';
import type { ConnectionLimits } from './connection-guard.js';

/** The local shell's settings, from the environment (README lists them). */
export interface LocalConfig {
  host: string;
  port: number;
  dataDir: string;
  adminToken: string | undefined;
  defaultWorkspace: string;
  workers: number;
  maxBodyBytes: number;
  /** SVC_MAX_CONNECTIONS, SVC_MAX_CONNECTIONS_PER_CLIENT, SVC_BODY_IDLE_SECONDS: what clients may hold open (adapters/local/connection-guard.ts). */
  connections: ConnectionLimits;
  sseKeepAliveMs: number;
  /** SVC_SSE_MAX_SECONDS: an SSE stream ends with a `timeout` event after this long (behind a proxy with a response limit); unset, it lasts as long as its job. */
  sseMaxMs: number | undefined;
  /** Public address of this server, used as BASE_INTERNAL_URL; defaults to the listening address. */
  baseUrl: string | undefined;
  /** `smtp://user:pass@host:port` (or smtps://): where email notices go; unset, they wait in the outbox. */
  smtpUrl: string | undefined;
  smtpFrom: string;
  /** SVC_WEBHOOK_ALLOW_PRIVATE=1: webhooks may reach loopback and private addresses (tests, trusted networks). */
  webhookAllowPrivate: boolean;
  /** How often the dispatcher looks for new webhook events. */
  webhookPollMs: number;
  /** How often expired tokens are deleted and expiry notices sent. */
  tokenSweepMs: number;
  /** How often the schedule ticker looks for due ticks (the finest schedule is one a second). */
  scheduleTickMs: number;
  core: Omit<CoreConfig, 'baseInternalUrl' | 'signingKey'>;
  /** Per-process job limits and the uids jobs run as (README: Job confinement). */
  jobLimits: ResourceLimits;
  jobUidRange: { first: number; count: number };
  /** SVC_JOB_NETWORK, SVC_JOB_NETWORK_ALLOW: jobs' network boundary (README "Job confinement"). */
  jobNetwork: NetworkSetting;
  /** Warm processes kept overall (each serves one workspace, user and script version). */
  maxWarmTotal: number;
  /** SVC_WARM_MEMORY_MB: what the warm processes may cost together; unset, a quarter of the machine's memory. */
  warmMemoryBytes: number | undefined;
  /** Pre-started processes without code per workspace, user, limits and language. */
  warmSpares: number;
  /** SVC_GO_PROXY: the instance's Go module proxy; without it Go scripts import the standard library and svc only. */
  goModuleProxy: string | undefined;
  /** Scripts' packages (README: Dependencies): the registry, its token, install scripts, and where trees are kept. */
  dependencies: {
    /** NPM_CONFIG_REGISTRY (default the public npm registry). */
    npmRegistry: string;
    /** SVC_NPM_TOKEN: a private registry's token, given to the installer only. */
    npmToken: string | undefined;
    /** SVC_NPM_INSTALL_SCRIPTS=1: packages' install scripts run, confined; off by default. */
    installScripts: boolean;
    /** PIP_INDEX_URL (default PyPI's simple index) and PIP_EXTRA_INDEX_URL (space-separated). */
    pipIndexUrl: string;
    pipExtraIndexUrls: string[];
    /** SVC_DEPS_DIR: the installed trees; by default a directory of the system temp dir named after the data dir. */
    cacheDir: string;
    /** SVC_DEPS_CACHE_MB (default 2048): the most the trees may take together; least recently used go first. */
    cacheMaxBytes: number;
    /** SVC_DEPS_WAIT_SECONDS (default 960): the longest a run waits for its version's packages to install. */
    waitMs: number;
  };
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): LocalConfig {
  return {
    host: env.HOST ?? '127.0.0.1',
    port: int(env, 'PORT', 8000),
    dataDir: resolve(env.SVC_DATA_DIR ?? '.svc'),
    adminToken: env.SVC_ADMIN_TOKEN || undefined,
    defaultWorkspace: env.SVC_DEFAULT_WORKSPACE ?? 'main',
    workers: int(env, 'SVC_WORKERS', 8),
    maxBodyBytes: int(env, 'SVC_MAX_BODY_BYTES', 10 * 1024 * 1024),
    connections: {
      maxConnections: int(env, 'SVC_MAX_CONNECTIONS', 4096),
      maxPerClient: int(env, 'SVC_MAX_CONNECTIONS_PER_CLIENT', 256),
      bodyIdleMs: int(env, 'SVC_BODY_IDLE_SECONDS', 30) * 1000,
    },
    sseKeepAliveMs: int(env, 'SVC_SSE_KEEPALIVE_SECONDS', 15) * 1000,
    sseMaxMs: int(env, 'SVC_SSE_MAX_SECONDS', 0) * 1000 || undefined,
    baseUrl: env.SVC_BASE_URL,
    smtpUrl: env.SVC_SMTP_URL || undefined,
    smtpFrom: env.SVC_SMTP_FROM || 'svc <svc@localhost>',
    tokenSweepMs: int(env, 'SVC_TOKEN_SWEEP_SECONDS', 3600) * 1000,
    webhookAllowPrivate: env.SVC_WEBHOOK_ALLOW_PRIVATE === '1',
    webhookPollMs: int(env, 'SVC_WEBHOOK_POLL_MS', 500),
    scheduleTickMs: int(env, 'SVC_SCHEDULE_TICK_MS', 250),
    jobLimits: limitsFromEnv(env),
    jobUidRange: uidRangeFromEnv(env),
    jobNetwork: networkFromEnv(env),
    maxWarmTotal: int(env, 'SVC_WARM_MAX_TOTAL', 128),
    warmMemoryBytes: env.SVC_WARM_MEMORY_MB ? int(env, 'SVC_WARM_MEMORY_MB', 0) * 1024 * 1024 : undefined,
    warmSpares: int(env, 'SVC_WARM_SPARES', 2),
    goModuleProxy: env.SVC_GO_PROXY || undefined,
    dependencies: {
      npmRegistry: env.NPM_CONFIG_REGISTRY || env.npm_config_registry || 'https://registry.npmjs.org/',
      npmToken: env.SVC_NPM_TOKEN || undefined,
      installScripts: env.SVC_NPM_INSTALL_SCRIPTS === '1',
      pipIndexUrl: env.PIP_INDEX_URL || 'https://pypi.org/simple/',
      pipExtraIndexUrls: (env.PIP_EXTRA_INDEX_URL ?? '').split(/\s+/).filter(Boolean),
      // Not inside the data dir: job uids must reach their tree, and may never enter the data dir.
      cacheMaxBytes: int(env, 'SVC_DEPS_CACHE_MB', 2048) * 1024 * 1024,
      // As long as the AWS shell's runs wait for a build (DEPS_BUILD_WAIT_SECONDS).
      waitMs: int(env, 'SVC_DEPS_WAIT_SECONDS', 960) * 1000,
      cacheDir: resolve(env.SVC_DEPS_DIR || join(tmpdir(), `svc-deps-${createHash('sha256').update(resolve(env.SVC_DATA_DIR ?? '.svc')).digest('hex').slice(0, 12)}`)),
    },
    core: {
      jobTimeoutMs: int(env, 'SVC_JOB_TIMEOUT_SECONDS', 900) * 1000,
      jobLeaseMarginMs: int(env, 'SVC_JOB_LEASE_MARGIN_SECONDS', 60) * 1000,
      maxOutputBytes: int(env, 'SVC_MAX_OUTPUT_BYTES', 5 * 1024 * 1024),
      syncMaxWaitMs: int(env, 'SVC_SYNC_MAX_WAIT_SECONDS', 60) * 1000,
      includeHeaders: (env.INCLUDE_HEADERS ?? '').split(',').map((h) => h.trim()).filter(Boolean),
      pollIntervalMs: 1000,
      webhookRetry: retryScheduleFromEnv(env),
      uploads: uploadSettingsFromEnv(env, 'SVC_'),
      flowMaxWhileIterations: int(env, 'SVC_FLOW_MAX_WHILE_ITERATIONS', 1000),
      flowMaxLoopItems: int(env, 'SVC_FLOW_MAX_LOOP_ITEMS', 10_000),
      maxRunDepth: int(env, 'SVC_MAX_RUN_DEPTH', DEFAULT_MAX_RUN_DEPTH),
      maxQueuedJobsPerWorkspace: int(env, 'SVC_MAX_QUEUED_JOBS_PER_WORKSPACE', DEFAULT_MAX_QUEUED_JOBS_PER_WORKSPACE),
      maxJobsPerRun: maxJobsPerRunFromEnv(env, 'SVC_MAX_JOBS_PER_RUN'),
    },
  };
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name}: expected a non-negative integer, got ${JSON.stringify(value)}`);
  return n;
}
