/**
 * The Node sandbox's work: runs one TypeScript or bash job with the local runner and reports it as
 * sandbox events. The sandbox Lambda (functions/handlers/sandbox.ts) streams these events to the
 * worker; sandbox-in-process.ts runs them on this machine for tests and local bridges.
 */
import { sandboxFor, type SandboxEvent } from './sandbox-protocol.js';
import { sandboxFailure } from './sandbox-wire.js';
import { outcomeEvent, resolveRequest } from './sandbox-payload-fetch.js';
import type { RunOutcome, RunRequest } from '../../ports.js';
import { describeDeno } from '../../runtime/deno-binary.js';
import { createLocalRunner, type LocalRunner } from '../../runtime/index.js';
import { sweepEnvironment } from '../../runtime/environment-sweep.js';
import { Confiner } from '../../runtime/confinement.js';
import { limitsFromEnv, uidRangeFromEnv } from '../../runtime/job-limits.js';
import { networkFromEnv } from '../../runtime/job-network.js';
import { log } from '../../core/common/logger.js';
import { fetchGoBinary } from './sandbox-go-binary.js';
import { TreeCache } from '../../runtime/dependencies/tree-cache.js';
import { fetchDependencyTree, fetchedTrees } from './sandbox-dependencies.js';

/** /tmp is the only writable place on Lambda. */
const DEFAULT_WORK_DIR = '/tmp/svc-sandbox';

let workDir = DEFAULT_WORK_DIR;
/**
 * One runner per container, kept across invocations: its warm processes hold script versions, so
 * the next invocation for the same version skips the start.
 */
let containerRunner: LocalRunner | undefined;
/** Dependency trees this container fetched (sandbox-dependencies.ts), by their lock's key. */
let containerTrees: TreeCache | undefined;

function sandboxRunner(): LocalRunner {
  if (containerRunner) return containerRunner;
  // Same rules as the local shell; where the platform allows less (no root or namespaces on
  // Lambda), the log says so rather than running unconfined silently.
  const confiner = new Confiner({ limits: limitsFromEnv(process.env), uidRange: uidRangeFromEnv(process.env), network: networkFromEnv(process.env) });
  log.info('sandbox runtime', { confinement: confiner.describe(), deno: describeDeno() });
  return (containerRunner = createLocalRunner({
    workDir,
    confiner,
    // Lambda sends a container one invocation at a time, so one warm process per version is
    // enough. How many versions stay warm is the runner's memory budget: a quarter of the
    // function's memory (what the environment reports as the machine's), measured per process.
    maxWarmPerKey: 1,
    // One spare per tenant and language: a new version skips the start without crowding memory.
    sparesPerKey: 1,
    // Go binaries fetched by this container (sandbox-go-binary.ts), by their content's hash.
    goCacheDir: goCacheDir(),
    dependencies: fetchedTrees(dependencyTrees()),
  }));
}

/** Beside the work directory too (SANDBOX_DEPS_DIR where the host sets it): kept for the life of the environment. */
function dependencyTrees(): TreeCache {
  // Bounded (SANDBOX_DEPS_CACHE_MB, default 256) within the function's /tmp, which jobs share.
  const maxBytes = Number(process.env.SANDBOX_DEPS_CACHE_MB || 256) * 1024 * 1024;
  return (containerTrees ??= new TreeCache(process.env.SANDBOX_DEPS_DIR || `${workDir}-deps`, maxBytes));
}

/** Beside the work directory, not in it: the sweep between jobs removes the work directory's files. */
function goCacheDir(): string {
  return `${workDir}-go`;
}

/** Moves the sandbox's work directory (tests); takes effect with the next runner. */
export function setSandboxWorkDir(dir: string): void {
  workDir = dir;
  containerTrees = undefined;
}

/**
 * Between two jobs in one Lambda execution environment: every stray process of the sandbox's uid
 * is killed (the warm ones are spared) and its work files removed.
 */
export function sweepBetweenJobs(): void {
  if (containerRunner) sweepEnvironment({ processGroups: containerRunner.warmProcessGroups(), dirs: [containerRunner.workRoot] });
}

/** Stops the warm processes of this container (tests, local bridges shutting down). */
export async function closeSandbox(): Promise<void> {
  const runner = containerRunner;
  containerRunner = undefined;
  await runner?.close();
}

/**
 * Runs one job and reports it through `write`: `log` and `stream` events as they happen, then
 * exactly one `outcome`. The payload is typed `unknown` because it comes off the wire: it is
 * checked here, and a bad one is answered with an outcome, never an exception.
 */
export async function runSandboxed(
  payload: unknown,
  write: (event: SandboxEvent) => void,
  signal: AbortSignal,
  /** Time the host gives this run; the job's own timeout is cut to fit inside it. */
  remainingMs = Number.POSITIVE_INFINITY,
): Promise<void> {
  // A request past Lambda's 6 MB comes as a stub pointing into the bucket, and an answer past it goes there (sandbox-payload-fetch.ts).
  const parsed = await resolveRequest(payload, signal);
  if (!parsed.ok) return write({ type: 'outcome', outcome: sandboxFailure(parsed.message) });
  const outcome = await runChecked(parsed.request, write, signal, remainingMs);
  write(await outcomeEvent({ type: 'outcome', outcome }, parsed.request.resultUrl, signal));
}

async function runChecked(request: RunRequest, write: (event: SandboxEvent) => void, signal: AbortSignal, remainingMs: number): Promise<RunOutcome> {
  if (sandboxFor(request.language) !== 'node') {
    return sandboxFailure(`the Node sandbox does not run ${request.language} jobs`);
  }
  if (request.language === 'go') {
    const fetched = await fetchGoBinary(request, goCacheDir(), signal);
    if (fetched !== null) return sandboxFailure(fetched);
  }
  const fetched = await fetchDependencyTree(request, dependencyTrees(), signal);
  if (fetched !== null) return { ok: false, error: { name: 'DependencyInstallFailed', message: fetched } };
  // The runner's own timeout yields a proper TimeoutError; Lambda's would cut the stream mid-job.
  const timeoutMs = Math.max(1, Math.min(request.timeoutMs, remainingMs));
  try {
    return await sandboxRunner().run(
      { ...request, timeoutMs },
      { onLog: (text) => write({ type: 'log', text }), onStream: (chunk) => write({ type: 'stream', chunk }) },
      signal,
    );
  } catch (error) {
    return sandboxFailure(`the sandbox failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
