import { resultWithStream, StreamLines, type SplitOutput } from './stream-lines.js';
import { signJobToken } from './job-tokens.js';
import { getJobLimits, runLimitsOf } from '../workspace/job-limits-setting.js';
import { cancelSignal, errorOf, isFinished, runTimeoutMs } from '../jobs/jobs.js';
import { jobPrincipal } from '../identity/auth.js';
import { Rights } from '../identity/permissions.js';
import { BindingError, resolveArgs } from '../workspace/bindings.js';
import type { WorkerDeps } from '../deps.js';
import { advanceFlow } from '../flows/advance.js';
import { legacyScriptHash } from '../jobs/run-target.js';
import { findFlowVersion } from '../flows/flows.js';
import { findModule, flowModules } from '../flows/definition.js';
import { stepTimeoutSeconds } from '../flows/step-timeout.js';
import { loadSharedFolder, saveSharedFolder, sharedFolderOf } from '../flows/shared-folder.js';
import { inferSchema } from '../schema/index.js';
import { derivedOnce, scriptByHash } from '../scripts/version-cache.js';
import type { Job, JobCompletion, RunOutcome, ScriptVersion } from '../../ports.js';
import { STREAM_FLUSH_MS, throttledLogWriter } from './live-logs.js';
import { secretRedactor } from '../common/secret-redactor.js';
import { log } from '../common/logger.js';
import { userStack } from './user-stack.js';
import type { JobError } from '../../ports/code-runner.js';
import { onJobFailed, onJobSucceeded } from '../jobs/job-outcome.js';
import { windmillJobEnv } from './windmill-env.js';
import { flowStepId } from '../flows/step-id.js';
import { lineageOf, rootJob } from './job-lineage.js';
import { withinDepthLimit } from '../common/json-limits.js';
import { storeCachedResult } from '../jobs/result-cache.js';
import { leaveSlot } from '../jobs/concurrency.js';
import { pinnedJobCode } from '../dependencies/workspace-resolution.js';
import { forgetPreview, isPreviewHash, previewCode } from '../scripts/script-preview.js';

/** Time to store the outcome after the run's own timeout, before another worker may take over (CoreConfig.jobLeaseMarginMs unset). */
export const DEFAULT_JOB_LEASE_MARGIN_MS = 60_000;

/**
 * When a claim made at `now` lapses: no job outlives the instance's job timeout, so never before
 * it ends, and the instance's lease margin later (time to store the outcome).
 */
export function leaseUntil(now: Date, config: Pick<WorkerDeps['config'], 'jobTimeoutMs' | 'jobLeaseMarginMs'>): string {
  return new Date(now.getTime() + config.jobTimeoutMs + (config.jobLeaseMarginMs ?? DEFAULT_JOB_LEASE_MARGIN_MS)).toISOString();
}

/**
 * The longest the job may run once started (what executeJob gives it): its script's timeout or a
 * flow step's `timeout`, never more than the instance allows. A runner that holds the job itself
 * (the AWS flow runner's inline steps) checks it fits the time it has left before claiming it.
 */
export async function jobRunTimeoutMs(deps: WorkerDeps, job: Job): Promise<number> {
  const script = await jobCode(deps, job);
  const stepTimeout = await stepTimeoutSeconds(deps, job);
  return Math.min(script ? runTimeoutMs(script, deps.config) : deps.config.jobTimeoutMs, stepTimeout === null ? Infinity : stepTimeout * 1000);
}

/**
 * Runs one queued job: claim it, give it an ephemeral token, run its code in the sandbox, store
 * the outcome. Safe to call twice for the same job (queues deliver at least once): only the
 * caller that claims the job runs it, and a finished job is never written again. `claimed`: a job
 * stored as running for this worker (JobQueue.reserve), which needs no claim.
 */
export async function executeJob(deps: WorkerDeps, jobId: string, claimed?: Job): Promise<void> {
  const { store, clock, signals, config } = deps;
  const now = clock.now();
  const job = claimed ?? (await store.claimJob(jobId, now.toISOString(), leaseUntil(now, config)));
  if (!job) return;
  if (job.kind === 'flow') return advanceFlow(deps, job.workspace_id, job.id);

  const script = await jobCode(deps, job);
  if (!script) {
    await finish(deps, job, { status: 'failed', result: { error: { name: 'ScriptNotFound', message: `script version ${legacyScriptHash(job)} no longer exists` } }, logs: '' });
    return;
  }

  // The workspace scripts it imports, at the versions its lock pins (docs/workspace-imports.md).
  const code = await pinnedJobCode(store, script);
  if (!code.ok) {
    await finish(deps, job, { status: 'failed', result: { error: code.error }, logs: '' });
    return;
  }

  let args: Record<string, unknown>;
  try {
    args = await boundArgs(deps, job);
  } catch (e) {
    if (!(e instanceof BindingError)) throw e;
    // Spec 5.5 / 7.5: a reference the job's identity may not read fails the job, naming only the reference.
    await finish(deps, job, { status: 'failed', result: { error: { name: e.name, message: e.message } }, logs: '' });
    return;
  }

  // A script (or a flow step's `timeout`) may ask for less time than the instance allows, never more.
  const stepTimeout = await stepTimeoutSeconds(deps, job);
  const timeoutMs = Math.min(runTimeoutMs(script, config), stepTimeout === null ? Infinity : stepTimeout * 1000);
  // Valid at most as long as the job could run, and refused as soon as the job is no longer running.
  const token = signJobToken(
    config.signingKey,
    { username: job.created_by, workspaceId: job.workspace_id, jobId, scopes: job.created_scopes ?? null },
    new Date(clock.now().getTime() + timeoutMs + 60_000),
  );

  const sharedFolder = await sharedFolderOf(deps, job);
  const limits = runLimitsOf(await getJobLimits(store, job.workspace_id));
  const abort = new AbortController();
  const stopWatching = watchForCancel(deps, job.workspace_id, jobId, abort);
  let logs = '';
  // The job's own token never reaches its logs (an `env` dump): whoever may read them would act as its creator while it runs.
  const redactToken = secretRedactor(token, "[redacted: this job's token]");
  const redactStreamToken = secretRedactor(token, "[redacted: this job's token]");
  // Waiters (SSE streams carrying new_logs) are woken as the logs land, like stream chunks.
  const liveLogs = throttledLogWriter((chunk) => store.appendJobLogs(jobId, chunk).then(() => signals.notify(jobId)), config.maxOutputBytes);
  // Stream chunks are written in order even when the store is asynchronous, those of one period together.
  const liveStream = throttledLogWriter((chunk) => store.appendJobStream(jobId, chunk).then(() => signals.notify(jobId)), config.maxOutputBytes, STREAM_FLUSH_MS);
  // `WM_STREAM: ` lines of output (Windmill's result stream from anywhere in a script) are stream chunks, not logs.
  const streamLines = new StreamLines();
  let lineStream = '';
  /** Sends the stream lines' text on to the stream; answers the rest of the output, the logs. */
  const takeStream = ({ log: logText, stream }: SplitOutput) => {
    if (stream) {
      lineStream += stream;
      liveStream.add(redactStreamToken.push(stream));
    }
    return logText;
  };
  let outcome: RunOutcome;
  try {
    const flow = await flowContext(deps, job);
    outcome = await deps.runner.run(
      {
        jobId,
        workspaceId: job.workspace_id,
        language: script.language,
        scriptHash: script.hash,
        content: code.content,
        ...(code.modules && Object.keys(code.modules).length > 0 ? { modules: code.modules } : {}),
        args,
        schema: script.schema,
        env: {
          OV_TOKEN: token,
          OV_WORKSPACE: job.workspace_id,
          BASE_INTERNAL_URL: config.baseInternalUrl,
          OV_JOB_ID: jobId,
          OV_JOB_PATH: job.script_path,
          OV_USERNAME: job.created_by,
          // 1 on the first run; more when a crash or a lost worker made this a re-run, so the
          // script can tell and make its side effects idempotent.
          OV_JOB_ATTEMPT: String(job.attempts),
          ...flow,
          // The same values under the names Windmill's client libraries read (docs/windmill.md).
          ...windmillJobEnv(job, token, config.baseInternalUrl, flow, await flowStepId(deps, job), (await store.getUser(job.created_by))?.email ?? ''),
        },
        timeoutMs,
        maxOutputBytes: config.maxOutputBytes,
        ...(sharedFolder ? { shared: await loadSharedFolder(deps, sharedFolder) } : {}),
        ...(limits ? { limits } : {}),
        ...(code.lock ? { lock: code.lock } : {}),
      },
      {
        onStream: (chunk) => liveStream.add(redactStreamToken.push(chunk)),
        onLog: (text) => {
          const shown = redactToken.push(takeStream(streamLines.push(text)));
          logs += shown;
          liveLogs.add(shown);
        },
      },
      abort.signal,
    );
  } catch (e) {
    outcome = { ok: false, error: { name: 'InternalError', message: `the job could not be run: ${(e as Error).message}` } };
  } finally {
    stopWatching();
    const rest = redactToken.push(takeStream(streamLines.flush())) + redactToken.flush();
    if (rest) {
      logs += rest;
      liveLogs.add(rest);
    }
    const streamRest = redactStreamToken.flush();
    if (streamRest) liveStream.add(streamRest);
  }
  await liveStream.stop(true);
  await liveLogs.stop();
  if (sharedFolder && outcome.shared) await saveSharedFolder(deps, sharedFolder, outcome.shared);
  // Whatever a script returns, from any runner or shell, is walked by the store and the callers:
  // a result nested beyond the limit fails the job here, before anything recursive touches it.
  // A script that streamed with `WM_STREAM: ` lines: its result carries the stream, as a generator's does.
  if (outcome.ok && streamLines.seen && !outcome.streamed) outcome = { ...outcome, result: resultWithStream(lineStream, outcome.result, outcome.result !== null) };
  outcome = withinDepthLimit(outcome);
  // A script with `cache_ttl`: an identical run within the TTL is answered with this result.
  if (outcome.ok && job.kind === 'script' && script.cache_ttl) await storeCachedResult(deps, job, outcome.result, script.cache_ttl);
  await finish(
    deps,
    job,
    outcome.ok
      ? { status: 'success', result: outcome.result, logs }
      : { status: 'failed', result: { error: shownError(job, outcome.error) }, logs },
  );
}

/** The runner's own failures are svc's: their stack is of the service, not of the user's code. */
const SERVICE_ERRORS = new Set(['RuntimeError', 'InternalError']);

/** A job's error as its author reads it (core/runs/user-stack.ts): their frames only, or none of svc's. */
function shownError(job: Job, error: JobError): JobError {
  if (typeof error.stack !== 'string') return error;
  if (SERVICE_ERRORS.has(error.name)) {
    // The frames are the operator's to read, in the service's log (where they went nowhere before);
    // the job's author sees the message alone, and the log not the message, which may quote job data.
    const frames = error.stack.split('\n').filter((line) => /^\s+at /.test(line)).map((line) => line.trim());
    log.error('job failed in the runner', { job_id: job.id, workspace_id: job.workspace_id, error: error.name, frames });
    const { stack: _serviceFrames, ...rest } = error;
    return rest;
  }
  return { ...error, stack: userStack(error.stack) };
}

/** The job's arguments with `$var:`/`$res:` references resolved as the job's creator. */
async function boundArgs(deps: WorkerDeps, job: Job): Promise<Record<string, unknown>> {
  const args = job.args ?? {};
  if (!Object.values(args).some((v) => typeof v === 'string' && v.startsWith('$'))) return args;
  const user = await deps.store.getUser(job.created_by);
  if (!user) throw new BindingError(`the job's creator ${job.created_by} no longer exists`);
  const rights = await Rights.load(deps, jobPrincipal(user.username, user.is_admin, job.workspace_id, job.id, job.created_scopes), job.workspace_id);
  return resolveArgs(deps, rights, args);
}

async function finish(deps: WorkerDeps, job: Job, completion: JobCompletion): Promise<void> {
  // Returns false when the job was canceled meanwhile: the cancellation stands.
  const stored = await deps.store.completeJob(job.id, completion, deps.clock.now().toISOString());
  await forgetPreview(deps.store, job);
  // A sync caller waiting in this process gets the result as stored, without reading it back.
  deps.signals.notify(job.id, stored ? { status: completion.status, result: completion.result } : undefined);
  // Its concurrency slot frees (a canceled job's was freed by the cancel): the next waiting run goes.
  if (stored) await leaveSlot(deps, job);
  // A flow step is done: its flow can go on, with the outcome as stored rather than reading it back.
  if (job.parent_job) await deps.flows.wake(job.workspace_id, job.parent_job, stored ? { id: job.id, status: completion.status, result: completion.result } : undefined);
  // Only the completion that was stored hands a scheduled run's failure on, so it is handed on once.
  if (stored && completion.status === 'failed') await onJobFailed(deps, job, errorOf(completion.result));
  if (stored && completion.status === 'success') await onJobSucceeded(deps, job);
}

/** Spec 2.3: a flow step also learns the flow that runs it and the flow at the top. */
async function flowContext(deps: WorkerDeps, job: Job): Promise<Record<string, string>> {
  if (!job.parent_job) return {};
  // Each job above is read once per process (job-lineage.ts): every step of a flow shares them.
  const parent = await lineageOf(deps.store, job.workspace_id, job.parent_job);
  if (!parent) return {};
  const root = await rootJob(deps.store, job.workspace_id, parent);
  return { OV_FLOW_JOB_ID: parent.id, OV_FLOW_PATH: root.script_path, OV_ROOT_FLOW_JOB_ID: root.id };
}

/** The code a job runs: a script version, or an inline script of a flow version. */
async function jobCode(deps: WorkerDeps, job: Job): Promise<ScriptVersion | null> {
  if (job.kind === 'script') {
    if (job.script_hash === null) return null;
    // A test run of unsaved code (core/scripts/script-preview.ts): its code is kept under the job's id.
    if (isPreviewHash(job.script_hash)) return previewCode(deps.store, job.workspace_id, job.script_hash);
    return scriptByHash(deps.store, job.workspace_id, job.script_hash);
  }
  if (job.kind !== 'flowstep' || job.flow_version === null || job.flow_module === null) return null;
  const { flow_version: version, flow_module: moduleId } = job;
  // Immutable: a flow version's step, its code and inferred schema, are worked out once.
  return derivedOnce(deps.store, `flowstep\n${job.workspace_id}\n${version}\n${moduleId}\n${job.script_path}`, () => flowStepCode(deps, job.workspace_id, job.script_path, version, moduleId));
}

async function flowStepCode(deps: WorkerDeps, workspaceId: string, path: string, version: number, moduleId: string): Promise<ScriptVersion | null> {
  // Read once per process for all of the flow's steps (flows.ts).
  const flow = await findFlowVersion(deps.store, workspaceId, version);
  const module = flow && findModule(flowModules(flow.value), moduleId);
  if (!flow || module?.value.type !== 'rawscript') return null;
  const language = module.value.language;
  return {
    workspace_id: workspaceId,
    path,
    // Warm processes are reused per hash: one per flow version and step.
    hash: `flow-${version}:${moduleId}`,
    parent_hash: null,
    content: module.value.content,
    language,
    summary: module.summary ?? '',
    description: '',
    schema: inferSchema(language, module.value.content),
    delete_after_use: false,
    timeout: null,
    created_by: flow.created_by,
    created_at: flow.created_at,
    // The packages it imports, resolved when the flow version was created (inline-step-locks.ts).
    ...(flow.step_locks?.[moduleId] ? { lock: flow.step_locks[moduleId] } : {}),
  };
}

/** Aborts the run when the job is canceled through the API while it runs. */
function watchForCancel(deps: WorkerDeps, workspaceId: string, jobId: string, abort: AbortController): () => void {
  let watching = true;
  void (async () => {
    while (watching) {
      await deps.signals.wait(cancelSignal(jobId), deps.config.cancelPollIntervalMs ?? deps.config.pollIntervalMs);
      if (!watching) return;
      const job = await deps.store.getJob(workspaceId, jobId);
      if (!job || (isFinished(job.status) && job.status === 'canceled')) {
        abort.abort();
        return;
      }
    }
  })();
  return () => {
    watching = false;
    // Wakes the pending wait now: left to its timeout, each finished run's watcher (its timer,
    // listener and the run's abort controller) lived on for the poll interval.
    deps.signals.notify(cancelSignal(jobId));
  };
}
