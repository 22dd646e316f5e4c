import { getJob, isFinished } from '../jobs/jobs.js';
import { getFlowRun, waitingStatus } from '../flows/run-state.js';
import type { CoreDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/** Spec 4.5: the SSE events of a job, as an async sequence the HTTP layer writes out. */

/**
 * With `logOffset` (getupdate_sse), every update also carries `log_offset`, and the job's log text
 * since the last update as `new_logs` when there is any (the worker stores a running job's logs as
 * they come, see live-logs.ts). The stream webhook keeps the spec's fields only.
 */
export type LogFields = { new_logs?: string; log_offset?: number };

export type JobUpdate = (
  | { type: 'update'; new_result_stream: string; stream_offset: number }
  /** A flow starts or stops waiting: `suspended` (approval step), `awaiting_approval` (ConsentGate), `running`. */
  | { type: 'update'; status: string; stream_offset: number }
  | {
      type: 'update';
      completed: true;
      status: string;
      success: boolean | null;
      only_result: unknown;
      new_result_stream?: string;
      stream_offset: number;
    }
) &
  LogFields;

/**
 * The stream's last event when it must end before the job does (`endBy`: the shell's limit on a
 * response, as Lambda's): where the client is, so it reconnects with `stream_offset` (and
 * `log_offset`) and misses nothing. Windmill's stream says `{"type": "timeout"}` there too.
 */
export type StreamTimeout = { type: 'timeout'; stream_offset: number; log_offset?: number };

// With `fast=true` a new job is re-read quickly at first, then at the normal pace.
const FAST_PHASE_MS = 2_000;
const FAST_INTERVAL_MS = 50;

export async function* jobUpdates(
  deps: CoreDeps,
  workspaceId: string,
  id: string,
  opts: { fast: boolean; streamOffset?: number; logOffset?: number; endBy?: number },
): AsyncGenerator<JobUpdate | StreamTimeout> {
  const startedAt = deps.clock.now().getTime();
  // A client that reconnects says how much of the stream it has already (spec 4.5 `stream_offset`).
  let offset = opts.streamOffset ?? 0;
  // The waiting status last told, so a flow's pauses are told once each.
  let told = 'running';
  let logOffset = opts.logOffset;
  /** The job's log text since the last update, for clients that asked for logs. */
  const logsOf = (job: Job): LogFields => {
    if (logOffset === undefined) return {};
    const logs = job.logs ?? '';
    // Completion stores the full text; an offset past its end (a client's guess) gives nothing new.
    const fresh = logs.slice(Math.min(logOffset, logs.length));
    logOffset = Math.max(logOffset, logs.length);
    return fresh ? { new_logs: fresh, log_offset: logOffset } : { log_offset: logOffset };
  };
  for (;;) {
    const now = deps.clock.now().getTime();
    const fastPhase = opts.fast && now - startedAt < FAST_PHASE_MS;
    const interval = fastPhase ? FAST_INTERVAL_MS : deps.config.pollIntervalMs;
    // Never sleeps past the end: the last look at the job comes at it.
    const wake = deps.signals.wait(id, opts.endBy === undefined ? interval : Math.max(0, Math.min(interval, opts.endBy - now)));
    const job = await getJob(deps, workspaceId, id);
    // A flow streams what its last step streams, if that step is a script (spec 4.5).
    const source = job.kind === 'flow' ? await lastStepJob(deps, job) : job;
    const stream = source?.result_stream ?? '';
    const fresh = stream.slice(offset);
    offset = Math.max(offset, stream.length);
    if (isFinished(job.status)) {
      yield {
        type: 'update',
        completed: true,
        status: job.status,
        success: job.success,
        // A streamed job's result is the whole stream; any other job's result is its value.
        // A generator that also returned a value has that value, with the stream as `wm_stream`.
        only_result: source?.streaming && job.success && !hasStreamField(job.result) ? stream : job.result,
        ...(fresh ? { new_result_stream: fresh } : {}),
        stream_offset: offset,
        ...logsOf(job),
      };
      return;
    }
    const logs = logsOf(job);
    // A progress update keeps the spec's fields: one with only new logs has an empty stream part.
    if (fresh || logs.new_logs) yield { type: 'update', new_result_stream: fresh, stream_offset: offset, ...logs };
    if (job.kind === 'flow' && job.status === 'running') {
      const run = await getFlowRun(deps, workspaceId, id);
      const shown = run ? waitingStatus(run, job.status) : job.status;
      if (shown !== told) yield { type: 'update', status: shown, stream_offset: offset, ...(logOffset === undefined ? {} : { log_offset: logOffset }) };
      told = shown;
    }
    if (opts.endBy !== undefined && deps.clock.now().getTime() >= opts.endBy) {
      yield { type: 'timeout', stream_offset: offset, ...(logOffset === undefined ? {} : { log_offset: logOffset }) };
      return;
    }
    await wake;
  }
}

/** The job of a flow's last step, when that step is a script that has started. */
async function lastStepJob(deps: CoreDeps, flowJob: Job): Promise<Job | null> {
  const run = await getFlowRun(deps, flowJob.workspace_id, flowJob.id);
  const last = run?.modules[run.modules.length - 1];
  if (!run || !last || (last.value.type !== 'rawscript' && last.value.type !== 'script')) return null;
  const childId = Object.keys(run.step_modules).find((jobId) => run.step_modules[jobId] === last.id);
  return childId ? deps.store.getJob(flowJob.workspace_id, childId) : null;
}

function hasStreamField(result: unknown): boolean {
  return typeof result === 'object' && result !== null && 'wm_stream' in result;
}
