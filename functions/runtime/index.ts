import { totalmem } from 'node:os';
import type { CodeRunner, Ecosystem, JobError, RunHooks, RunOutcome, RunRequest } from '../ports.js';
import { importsWindmillClient, installWindmillClient } from './client-libraries.js';
import { runBash } from './bash-runner.js';
import { BashSpare } from './bash-spare.js';
import { Confiner } from './confinement.js';
import { startDenoSpare } from './deno-runner.js';
import { goBinary, runGo } from './go-runner.js';
import { goCall, servesWarm, startGoProcess } from './go-warm.js';
import { canceledError } from './job-guard.js';
import { pythonCall, startPythonSpare } from './python-runner.js';
import { prepareWorkRoot, type SandboxProcess } from './sandbox-process.js';
import { ScriptStartError } from './script-start-error.js';
import { SparePool } from './spare-pool.js';
import { startTypeScriptSpare, typeScriptCall, typeScriptCode, typeScriptModules } from './typescript-runner.js';
import { WarmPool, type Lease } from './warm-pool.js';
import type { WarmWorker } from './warm-worker.js';
import { DependencyInstallError } from './dependencies/tree-cache.js';

export interface LocalRunnerOptions {
  /** Where per-process and per-job directories go (see `prepareWorkRoot` for the root case). */
  workDir: string;
  /** Warm processes per workspace and script version (default 4). */
  maxWarmPerKey?: number;
  /** Warm processes kept overall, whatever their size (default 128): each holds a uid and pipes. */
  maxWarmTotal?: number;
  /** Memory the idle warm processes may cost together, in bytes (default `defaultWarmMemoryBudget()`). */
  warmMemoryBytes?: number;
  /** How long an idle warm process lives (default 60 s). */
  idleMs?: number;
  /** Spare processes without code kept per workspace, run-as identity, limits and language (default 2). */
  sparesPerKey?: number;
  /** Spare processes kept overall (default 8): the oldest goes to make room for another key's. */
  maxSpares?: number;
  /** How jobs are confined; one is made with the defaults when not given. */
  confiner?: Confiner;
  /** Where the GoCompiler keeps the binaries of Go scripts (go-build.ts); without it Go jobs fail. */
  goCacheDir?: string;
  /** Installs scripts' locked packages (README: Dependencies); without it such scripts fail. */
  dependencies?: DependencyTrees;
}

/** Where a lock's installed tree is: installed when missing (local shell), or fetched before the run (AWS sandbox). */
export interface DependencyTrees {
  /** The tree's directory, null when the lock installs nothing; a failed install rejects with DependencyInstallError. */
  tree(ecosystem: Ecosystem, lock: string): Promise<string | null>;
  /** Keeps the tree from being removed (a bounded cache) until the returned function is called; taken before `tree`. */
  hold?(ecosystem: Ecosystem, lock: string): () => void;
}

/** The local runner, plus what a Lambda environment's between-jobs sweep must spare. */
export interface LocalRunner extends CodeRunner {
  /** Process groups of the warm processes (each is its group's leader). */
  warmProcessGroups(): number[];
  /** Where the runner keeps its code and job directories. */
  readonly workRoot: string;
}

/**
 * Runs user code in sandboxed child processes on this machine. TypeScript, Deno, Python and Go jobs go to
 * warm processes that already hold the script version, so a run costs a message, not a start. A
 * version without one takes a pre-started spare of its language and identity and gives it its
 * code (README: Job confinement, warm processes).
 */
export function createLocalRunner(options: LocalRunnerOptions): LocalRunner {
  const workRoot = prepareWorkRoot(options.workDir);
  const confiner = options.confiner ?? new Confiner();
  const jails = confiner.forRunner(workRoot);
  const pool = new WarmPool<WarmWorker>({
    maxPerKey: options.maxWarmPerKey ?? 4,
    maxTotal: options.maxWarmTotal ?? 128,
    memoryBudgetBytes: options.warmMemoryBytes ?? defaultWarmMemoryBudget(),
    idleMs: options.idleMs ?? 60_000,
  });
  const spares = new SparePool<WarmWorker>({
    perKey: options.sparesPerKey ?? 2,
    maxTotal: options.maxSpares ?? 8,
    idleMs: options.idleMs ?? 60_000,
  });
  // Bash jobs start from spares too (bash-spare.ts), one process per job; a pool of their own, as
  // no other language's process is one: at most half as many as the interpreters' spares.
  const bashSpares = new SparePool<BashSpare>({
    perKey: options.sparesPerKey ?? 2,
    maxTotal: Math.max(1, Math.floor((options.maxSpares ?? 8) / 2)),
    idleMs: options.idleMs ?? 60_000,
  });
  const bashJobs = new Set<SandboxProcess>();
  let closing = false;

  const trackBash = (proc: SandboxProcess) => {
    bashJobs.add(proc);
    return () => void bashJobs.delete(proc);
  };

  async function runWarm(req: RunRequest, hooks: RunHooks, signal: AbortSignal): Promise<RunOutcome> {
    const python = req.language === 'python3';
    // Never shared across workspaces, run-as identities or versions: module state, the uid's
    // files and the code belong to one of each.
    // The workspace's limits are part of the process (its cgroup), so a change gets a new one.
    const identity = [req.workspaceId, req.env.OV_USERNAME ?? '', req.limits ?? null];
    // A script with packages gets spares that can read its installed tree, and only that one,
    // held in the cache (never removed to make room) until the job ends.
    const ecosystem = python ? 'pypi' : 'npm';
    const releaseTree = req.lock ? options.dependencies?.hold?.(ecosystem, req.lock) : undefined;
    try {
      return await runWithTree(req, hooks, signal, python, identity, req.lock ? await dependencyTree(ecosystem, req.lock, signal) : null);
    } finally {
      releaseTree?.();
    }
  }

  async function runWithTree(req: RunRequest, hooks: RunHooks, signal: AbortSignal, python: boolean, identity: unknown[], depsTree: string | null): Promise<RunOutcome> {
    const deno = req.language === 'deno';
    const startSpare = () => (python ? startPythonSpare : deno ? startDenoSpare : startTypeScriptSpare)(req.limits, jails, depsTree ?? undefined);
    const start = async () => {
      // Deno compiles its own TypeScript (and imports no workspace scripts).
      const code = python || deno ? req.content : await typeScriptCode(req);
      const modules = python ? req.modules : deno ? undefined : await typeScriptModules(req);
      // A spare has never held code, so it carries no other script's module state.
      const worker = await spares.take(JSON.stringify([...identity, req.language, depsTree]), startSpare);
      try {
        await worker.loadCode(code, modules, !python && !deno && importsWindmillClient(code) ? installWindmillClient : undefined);
      } catch (error) {
        await worker.dispose();
        throw error;
      }
      return worker;
    };
    const key = JSON.stringify([...identity, req.language, req.scriptHash]);
    return runLeased(key, start, req, python ? pythonCall(req) : typeScriptCall(req), hooks, signal);
  }

  /** One job in a warm process of `key` (started with `start` when none is idle). */
  async function runLeased(key: string, start: () => Promise<WarmWorker>, req: RunRequest, call: Record<string, unknown>, hooks: RunHooks, signal: AbortSignal): Promise<RunOutcome> {
    const lease: Lease<WarmWorker> = await pool.acquire(key, start, signal);
    let reusable = false;
    try {
      const run = await lease.worker.run(req, call, hooks, signal);
      reusable = run.reusable;
      return run.outcome;
    } finally {
      pool.release(lease, reusable);
    }
  }

  /**
   * A Go job goes to a warm process of its version's binary, in the same trust domain as the other
   * languages' (there is no spare: the binary is the code). A binary without the serve loop (built
   * by an older svc) runs one process per job.
   */
  async function runGoJob(req: RunRequest, hooks: RunHooks, signal: AbortSignal): Promise<RunOutcome> {
    const built = goBinary(req, options.goCacheDir);
    if (!built.ok) return built;
    if (!(await servesWarm(built.binary))) return runGo(req, hooks, signal, trackBash, jails, built.binary);
    const key = JSON.stringify([req.workspaceId, req.env.OV_USERNAME ?? '', req.limits ?? null, 'go', built.binary]);
    return runLeased(key, () => startGoProcess(built.binary, req, signal, jails), req, goCall(req), hooks, signal);
  }

  /**
   * The installed tree of a version's lock: installed at create, so normally there; a run of a
   * version still installing waits for it, and one whose install failed fails with that error.
   */
  async function dependencyTree(ecosystem: Ecosystem, lock: string, signal: AbortSignal): Promise<string | null> {
    const installers = options.dependencies;
    if (!installers) return null;
    const aborted = new Promise<never>((_, reject) => {
      const stop = () => reject(new ScriptStartError(canceledError()));
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
    });
    aborted.catch(() => undefined);
    try {
      return await Promise.race([installers.tree(ecosystem, lock), aborted]);
    } catch (error) {
      if (error instanceof DependencyInstallError) throw new ScriptStartError({ name: 'DependencyInstallFailed', message: error.message });
      throw error;
    }
  }

  /** Never shared across workspaces or run-as identities, like the other languages' spares. */
  function takeBashSpare(req: RunRequest, jobEnded: Promise<void>): Promise<BashSpare> {
    const key = JSON.stringify([req.workspaceId, req.env.OV_USERNAME ?? '', req.limits ?? null, 'bash']);
    return bashSpares.take(key, () => BashSpare.start(req.limits, jails), jobEnded);
  }

  return {
    workRoot,
    warmProcessGroups: () => [...pool.workers(), ...spares.workers(), ...bashSpares.workers()].flatMap((w) => (w.pid === undefined ? [] : [w.pid])),

    async run(req, hooks, signal) {
      if (closing) return { ok: false, error: canceledError('the runner is shutting down') };
      if (signal.aborted) return { ok: false, error: canceledError() };
      try {
        if (req.language === 'bash') return await runBash(req, hooks, signal, trackBash, (jobEnded) => takeBashSpare(req, jobEnded));
        if (req.language === 'go') return await runGoJob(req, hooks, signal);
        return await runWarm(req, hooks, signal);
      } catch (error) {
        return { ok: false, error: asJobError(error) };
      }
    },

    async close() {
      closing = true;
      const bash = [...bashJobs];
      for (const proc of bash) proc.kill();
      await Promise.all([pool.close(), spares.close(), bashSpares.close(), ...bash.map((proc) => proc.exited)]);
      await jails.close();
    },
  };
}

/**
 * A quarter of the memory this service may use: the machine's, or its own cgroup's limit when that
 * is lower (a container, a Lambda environment). Room for ~150 Python or ~30 Node warm processes per
 * GiB of that quarter, and three quarters left for the jobs themselves and the service.
 */
export function defaultWarmMemoryBudget(): number {
  const constrained = process.constrainedMemory?.() || Infinity;
  return Math.floor(Math.min(totalmem(), constrained) / 4);
}

function asJobError(error: unknown): JobError {
  if (error instanceof ScriptStartError) return error.jobError;
  const e = error instanceof Error ? error : new Error(String(error));
  return { name: 'RuntimeError', message: `the runner failed: ${e.message}`, stack: e.stack };
}
