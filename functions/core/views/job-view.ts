import { z } from 'zod';
import type { Assignable } from './same.js';
import { JOB_KINDS, JOB_TRIGGERS, LANGUAGES, type JobKind, type JobStatus, type JobTrigger } from '../../ports.js';
import type { flowStatusView } from '../flows/run-state.js';

/**
 * A job as the API answers it (`jobs_u/get`, `jobs/list`): the schema `jobView` (jobs.ts) is typed
 * by, the OpenAPI document's description of it, and the type the CLI reads it with. A field added
 * to or taken from `jobView` without changing this fails `npm run check`.
 */

const STATUSES = ['queued', 'running', 'suspended', 'awaiting_approval', 'success', 'failed', 'canceled'] as const satisfies readonly JobStatus[];
const stamp = z.string();

export const jobViewSchema = z.object({
  id: z.string(),
  workspace_id: z.string(),
  type: z.enum(['CompletedJob', 'QueuedJob']),
  status: z.enum(STATUSES),
  running: z.boolean(),
  success: z.boolean().nullable(),
  result: z.unknown(),
  args: z.record(z.string(), z.unknown()).nullable(),
  logs: z.string(),
  job_kind: z.enum(JOB_KINDS as [JobKind, ...JobKind[]]),
  parent_job: z.string().nullable(),
  /** The job whose job token started this run through the API (Windmill's `parent_job` of such a run), when one did. */
  started_by_job: z.string().optional(),
  /** How many jobs are above a run a job started: the limit is SVC_MAX_RUN_DEPTH (docs/security.md). */
  run_depth: z.number().int().optional(),
  script_path: z.string(),
  /** A script job's hash; a flow's version id, or `<version>:<module>` for a flow step (Windmill's shape). */
  script_hash: z.string(),
  flow_version: z.number().int().nullable(),
  flow_module: z.string().nullable(),
  language: z.enum(LANGUAGES),
  created_by: z.string(),
  schedule_path: z.string().nullable(),
  trigger: z.enum(JOB_TRIGGERS as [JobTrigger, ...JobTrigger[]]).nullable(),
  created_at: stamp,
  started_at: stamp.nullable(),
  completed_at: stamp.nullable(),
  attempts: z.number().int(),
  deleted: z.boolean(),
  /** Answered from a kept result of an identical run (cache_ttl), without running. */
  cache_hit: z.boolean(),
  priority: z.number().int(),
  /** The concurrency_limit key the run counts against, when its script or flow has a limit. */
  concurrency_key: z.string().optional(),
  /** Queued and held until a concurrency slot frees. */
  waiting_for_concurrency_slot: z.literal(true).optional(),
});
export type JobView = z.output<typeof jobViewSchema>;

/** One attempt of a step with `retry` (run-state.ts StepAttempt). */
const stepAttemptSchema = z.object({
  attempt: z.number().int(),
  job: z.string().nullable(),
  status: z.enum(['success', 'failed']),
  at: stamp,
  error: z.unknown().optional(),
  /** When the next attempt starts; absent after the last one. */
  retry_at: stamp.optional(),
});

/** One thing that happened at an approval step or a ConsentGate (run-state.ts ApprovalAuditEntry). */
const auditEntrySchema = z.object({
  step: z.string(),
  event: z.enum(['approved', 'rejected', 'canceled', 'timed_out', 'notified', 'notice_failed']),
  at: stamp.nullable(),
  who: z.string().nullable(),
  via: z.string(),
  reason: z.string().optional(),
  values: z.unknown().optional(),
  logged_in: z.boolean().optional(),
});

/** A flow job's run: the fields clients read are named; the rest of `flowStatusView` passes as it is. */
const flowStatusSchema = z.looseObject({
  status: z.string(),
  step: z.number().int(),
  modules: z.array(z.string()),
  step_jobs: z.record(z.string(), z.string()),
  results: z.record(z.string(), z.unknown()),
  /** The jobs each step ran so far (attempts, a loop's iterations, branches), by module id. */
  module_jobs: z.record(z.string(), z.array(z.string())),
  /** The approval steps' and gates' audit trail, oldest first. */
  audit: z.array(auditEntrySchema),
  /** The trigger step that found no new events and so ended the flow. */
  stopped_early: z.string().optional(),
  /** A `stop_after_if` that ended the flow. */
  stop: z.object({ module: z.string(), skipped: z.boolean(), error_message: z.string().optional() }).optional(),
  attempts: z.record(z.string(), z.array(stepAttemptSchema)).optional(),
  /** Steps whose `skip_if` was true. */
  skipped: z.array(z.string()).optional(),
  /** Steps answered from their `cache_ttl` cache: the job whose result they took. */
  cache_hits: z.record(z.string(), z.string()).optional(),
  /** The failure module that runs (or ran) for the step that failed, with that step's error. */
  failure_module: z.object({ module: z.string(), step_id: z.string(), error: z.unknown() }).optional(),
  /** The flow holds no worker until `until`: before a step's next attempt, or after a step's sleep. */
  wait: z.object({ module: z.string(), until: stamp, reason: z.enum(['retry', 'sleep']) }).optional(),
  /** A while loop's current iteration and its flow job. */
  iteration: z.object({ module: z.string(), index: z.number().int(), job: z.string() }).optional(),
  /** The ConsentGate the flow waits at. */
  gate: z.looseObject({ module: z.string() }).optional(),
  suspend: z
    .looseObject({
      module: z.string(),
      step_job: z.string(),
      approvals_received: z.number().int(),
      approvals_required: z.number().int(),
      deadline: z.string().nullable(),
    })
    .optional(),
});

/** `jobs_u/get/{id}`: the job and, for a flow, its run. */
export const jobWithFlowStatusSchema = jobViewSchema.extend({ flow_status: flowStatusSchema.optional() });
export type JobWithFlowStatus = z.output<typeof jobWithFlowStatusSchema>;

/** `jobs/list`: jobs, a flow waiting for people with its run. */
export const jobListSchema = z.array(jobWithFlowStatusSchema);
export type FlowStatusView = NonNullable<JobWithFlowStatus['flow_status']>;

// What flowStatusView builds must be what flowStatusSchema promises (checked by the compiler).
const flowStatusAgrees: Assignable<ReturnType<typeof flowStatusView>, z.output<typeof flowStatusSchema>> = true;
void flowStatusAgrees;
