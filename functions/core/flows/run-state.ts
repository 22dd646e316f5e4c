import type { FlowModule } from './definition.js';
import type { Job } from '../../ports.js';
import { getEntityValue } from '../store/entities.js';
import type { CoreDeps } from '../deps.js';
import { approvalsReceived, FLOW_LEVEL } from '../approvals/approval-count.js';

/**
 * What a flow job has done so far, kept as the `flow_run` entity under the flow job's id and
 * changed only through optimistic updates (see advance.ts). Inline branches and loop iterations
 * are flow jobs of their own, whose run starts with their modules and the parent's scope.
 */

export interface Approval {
  resume_id: number;
  /** The logged-in user, else the `approver` named in the URL, else "anonymous". */
  approver: string;
  payload: unknown;
  at: string;
  /** Whether a logged-in user approved (not just someone holding the URL). */
  logged_in?: boolean;
}


/** Resume and cancel requests for one step job; they may arrive before the flow reaches them. */
export interface StepEvents {
  approvals: Approval[];
  cancel?: { by: string; reason: string; at: string };
  /** Set when the step's approval timeout passed before enough approvals arrived. */
  timed_out?: boolean;
  /** Set when enough approvals (its own and the pre-approvals it counted) resumed the flow. */
  resumed?: boolean;
}

/** How a ConsentGate was decided (spec 7.7); `approver` is null when it timed out. */
export interface GateDecision {
  decision: 'approved' | 'rejected';
  approver: string | null;
  reason: string;
  at: string;
}

/** One attempt to tell a gate's approvers, kept so a failed notice is visible and never silent. */
export interface GateDelivery {
  channel: 'email' | 'webhook' | 'sns' | 'chat';
  target: string;
  attempt: number;
  ok: boolean;
  at: string;
  error?: string;
}

/** A ConsentGate the run reached: its rendered message, deadline, deliveries and decision. */
export interface GateState {
  message: string;
  deadline: string | null;
  deliveries: GateDelivery[];
  /** `pending` from the write that reached the gate until every notice was tried (gate-notices.ts). */
  notices?: 'pending' | 'done';
  decision?: GateDecision;
}

/** A post or update of a chat message (with its retries); a failed post leaves the resume URLs working. */
export interface ChatDelivery {
  method: string;
  ok: boolean;
  at: string;
  error?: string;
}

/**
 * A chat message whose buttons decide an approval (core/chat): a suspend step's (one resume id per
 * message, so each message counts once) or a ConsentGate's. `ts` is the chat app's id of the posted
 * message (Slack's `ts`, Teams' activity id); null while, or when, posting did not succeed.
 */
export interface ChatMessage {
  id: string;
  platform: 'slack' | 'teams';
  /** The connection's path: its signing secret checks the callbacks, its token posts. */
  connection: string;
  /** The channel's id (Slack's channel id, Teams' conversation id: updates need it); `requested_channel` is what was asked for (an id or a name). */
  channel: string;
  requested_channel?: string;
  ts: string | null;
  target: { kind: 'step'; step_job: string; resume_id: number } | { kind: 'gate'; module: string };
  /** Only this svc user (username or email) may decide; null: the step's own rules alone. */
  approver: string | null;
  text: string;
  default_args: Record<string, unknown>;
  enums: Record<string, string[]>;
  deliveries: ChatDelivery[];
  decision?: { decision: 'approved' | 'rejected'; by: string; at: string; reason?: string };
}

export type FlowStep =
  /** Waiting for one job: a script step, a sub-flow or the chosen branch. */
  | { kind: 'child'; module: string; job: Job }
  /** Waiting for several flow jobs: branchall branches or loop iterations. */
  | { kind: 'children'; module: string; jobs: Job[]; parallel: boolean; started: number; skip_failures: boolean[] }
  /** A step with `suspend` finished and the flow waits for approvals (spec 3). */
  | {
      kind: 'suspend';
      module: string;
      resume_job: string;
      required: number;
      deadline: string | null;
      step_result: unknown;
      /** `user_groups_required` given as an expression (another node's output), evaluated once. */
      groups?: string[];
      /** Pre-approvals the step's rules accept, as counted at its last settling. */
      pre_approvals?: number;
    }
  /** A ConsentGate waits for one decision (spec 1.4, 2.7); its state is in `gates`. */
  | { kind: 'gate'; module: string; deadline: string | null }
  /**
   * The flow waits, holding no worker, until `until`: before the next attempt of a failed step
   * (`retry`, the step is started again) or after a step with `sleep` (the flow goes on).
   */
  | { kind: 'wait'; module: string; until: string; reason: 'retry' | 'sleep' }
  /** A while loop runs iteration `iteration` (a flow job); `results` are the earlier ones'. */
  | { kind: 'while'; module: string; job: Job; iteration: number; results: unknown[] };

/** One attempt of a step with `retry`: which, its job, how it ended, and when the next one starts. */
export interface StepAttempt {
  attempt: number;
  job: string | null;
  status: 'success' | 'failed';
  at: string;
  error?: unknown;
  /** When the next attempt starts; absent when this one was the last. */
  retry_at?: string;
}

/** How a `stop_after_if` (or a loop's `stop_after_all_iters_if`) ended the flow. */
export interface FlowStop {
  module: string;
  /** `skip_if_stopped`: the flow ended successfully, shown as skipped. */
  skipped: boolean;
  error_message?: string;
}

/** The flow failed and its `failure_module` runs (or ran): what failed, as the module receives it. */
export interface FlowFailure {
  /** The failed step's result (its error in `error`), the failure module's `previous_result`. */
  result: unknown;
  step_id: string;
  started: boolean;
  /** How the flow ends once the failure module ran: `canceled` when an approval step was canceled or timed out (spec 3). */
  status?: 'failed' | 'canceled';
}

export interface FlowRun {
  flow_job: string;
  /** The flow version the code comes from (for inline scripts). */
  version: number;
  path: string;
  modules: FlowModule[];
  flow_input: Record<string, unknown>;
  /** Results of the enclosing flow's steps, visible to an inline branch or iteration. */
  outer_results: Record<string, unknown>;
  results: Record<string, unknown>;
  previous_result: unknown;
  /** The last resume payload, all of them, and who approved (spec 2.5), for the steps after. */
  resume: unknown;
  resumes: unknown[];
  approvers: string[];
  index: number;
  step: FlowStep | null;
  status: 'running' | 'suspended' | 'awaiting_approval' | 'finished';
  events: Record<string, StepEvents>;
  /** ConsentGates reached, by module id. */
  gates?: Record<string, GateState>;
  /** Chat messages posted for its approval steps and gates. */
  chat?: ChatMessage[];
  /** Resume ids of pre-approvals a suspend step used up: they never count again. */
  consumed?: number[];
  /** Which module each step job ran, so a resume URL (which names a step job) finds its settings. */
  step_modules: Record<string, string>;
  /** The flow jobs of each loop or branchall module (its iterations or branches), in order: the console opens them. */
  child_jobs?: Record<string, string[]>;
  /** The module at whose completion sync endpoints answer (spec 4.4), and its value once it did. */
  early_return?: string;
  early_result?: { value: unknown };
  /** `value.same_worker`: every step shares the `./shared` folder (a step may also ask on its own). */
  same_worker?: boolean;
  /** The flow job whose shared folder this run's steps use: the flow's own, for branches and iterations the enclosing flow's. */
  shared_folder?: string;
  /** The trigger step (`is_trigger`) that found no new events and so ended the flow there. */
  stopped_early?: string;
  /** Attempts of the steps that have `retry`, by module id. */
  attempts?: Record<string, StepAttempt[]>;
  /** Steps whose `skip_if` was true: they did not run. */
  skipped?: string[];
  /** A `stop_after_if` that ended the flow. */
  stop?: FlowStop;
  /** The flow's `failure_module` (top-level runs only) and, once the flow failed, what failed. */
  failure_module?: FlowModule;
  failure?: FlowFailure;
  /** Steps answered from their `cache_ttl` cache, by module id: the job stored with the kept result. */
  cache_hits?: Record<string, string>;
  /** Seconds each step job may run (the step's `timeout`), by job id: the worker reads it. */
  step_timeouts?: Record<string, number>;
  /** Set once the outcome is decided; the flow job is then completed with it. */
  outcome?: { status: 'success' | 'failed' | 'canceled'; result: unknown };
}

/** Decides the run's outcome; the flow job is completed with it once the run is stored. */
export function finish(run: FlowRun, outcome: NonNullable<FlowRun['outcome']>): void {
  run.status = 'finished';
  run.step = null;
  run.outcome = outcome;
}

/** What expressions see (spec 2.4): `flow_input`, `results.<id>`, `previous_result`, `resume`, `approvers`. */
export function expressionScope(run: FlowRun): Record<string, unknown> {
  return {
    // The failure module's input: the failed step's error.
    ...(run.failure ? { error: (run.failure.result as { error?: unknown } | null)?.error ?? run.failure.result } : {}),
    flow_input: run.flow_input,
    results: { ...run.outer_results, ...run.results },
    previous_result: run.previous_result,
    resume: run.resume,
    resumes: run.resumes,
    approvers: run.approvers,
  };
}

/** What the job API shows of a flow run. */
export function flowStatusView(run: FlowRun) {
  const step = run.step;
  return {
    status: run.status,
    step: run.index,
    modules: run.modules.map((m) => m.id),
    // Which module each step job runs (a `script` step's job names only the script it runs).
    step_jobs: run.step_modules,
    results: run.results,
    ...(run.stopped_early ? { stopped_early: run.stopped_early } : {}),
    ...(run.stop ? { stop: run.stop } : {}),
    ...(run.attempts ? { attempts: run.attempts } : {}),
    ...(run.skipped ? { skipped: run.skipped } : {}),
    ...(run.cache_hits ? { cache_hits: run.cache_hits } : {}),
    ...(run.failure && run.failure_module ? { failure_module: { module: run.failure_module.id, step_id: run.failure.step_id, error: run.failure.result } } : {}),
    ...(step?.kind === 'wait' ? { wait: { module: step.module, until: step.until, reason: step.reason } } : {}),
    ...(step?.kind === 'while' ? { iteration: { module: step.module, index: step.iteration, job: step.job.id } } : {}),
    ...(step?.kind === 'suspend'
      ? {
          suspend: {
            module: step.module,
            step_job: step.resume_job,
            approvals_received: approvalsReceived(run, step.resume_job),
            approvals_required: step.required,
            deadline: step.deadline,
            ...promptOf(step.step_result),
          },
        }
      : {}),
    ...(step?.kind === 'gate' && run.gates?.[step.module] ? { gate: { module: step.module, ...run.gates[step.module] } } : {}),
    ...(run.gates ? { gates: run.gates } : {}),
    // Where each chat message went and how its posts and updates fared (not its form prefills).
    ...(run.chat ? { chat: run.chat.map(({ default_args: _d, enums: _e, ...m }) => m) } : {}),
    audit: approvalAudit(run),
    module_jobs: moduleJobs(run),
    ...(step && (step.kind === 'child' || step.kind === 'children' || step.kind === 'while') ? { running: step.module } : {}),
  };
}

/** The jobs each module ran so far (a loop's or branches' current ones too), for views that open a step. */
function moduleJobs(run: FlowRun): Record<string, string[]> {
  const byModule: Record<string, string[]> = { ...run.child_jobs };
  for (const [jobId, moduleId] of Object.entries(run.step_modules)) (byModule[moduleId] ??= []).push(jobId);
  return byModule;
}

/** A flow job as the API shows it: `suspended` or `awaiting_approval` while it waits, with its run. */
export function withFlowStatus<V extends { status: string }>(view: V, run: FlowRun | null): V & { flow_status?: ReturnType<typeof flowStatusView> } {
  if (!run) return view;
  return { ...view, status: waitingStatus(run, view.status), flow_status: flowStatusView(run) };
}

/** A running flow job's status as users see it: it may be waiting for approvals or a gate's decision. */
export function waitingStatus(run: FlowRun, jobStatus: string): string {
  if (jobStatus !== 'running') return jobStatus;
  if (run.status === 'suspended' || run.status === 'awaiting_approval') return run.status;
  return jobStatus;
}

/** One thing that happened at an approval step or a ConsentGate: who, when, how, with what. */
export interface ApprovalAuditEntry {
  step: string;
  event: 'approved' | 'rejected' | 'canceled' | 'timed_out' | 'notified' | 'notice_failed';
  at: string | null;
  who: string | null;
  /** How it came in or went out: a resume URL (by id), a pre-approval URL, the consent endpoint, a notice channel. */
  via: string;
  reason?: string;
  values?: unknown;
  logged_in?: boolean;
}

/** The audit trail of a run's approval steps and gates (spec 7.7), oldest first. */
export function approvalAudit(run: FlowRun): ApprovalAuditEntry[] {
  const entries: ApprovalAuditEntry[] = [];
  for (const [key, events] of Object.entries(run.events)) {
    const step = key === FLOW_LEVEL ? 'pre-approval' : (run.step_modules[key] ?? key);
    for (const a of events.approvals) {
      entries.push({ step, event: 'approved', at: a.at, who: a.approver, via: `${key === FLOW_LEVEL ? 'pre-approval' : 'resume'} URL ${a.resume_id}`, values: a.payload, logged_in: a.logged_in ?? false });
    }
    if (events.cancel) entries.push({ step, event: 'canceled', at: events.cancel.at, who: events.cancel.by, via: 'cancel URL', reason: events.cancel.reason });
    if (events.timed_out) entries.push({ step, event: 'timed_out', at: null, who: null, via: 'timeout' });
  }
  for (const [step, gate] of Object.entries(run.gates ?? {})) {
    for (const d of gate.deliveries) entries.push({ step, event: d.ok ? 'notified' : 'notice_failed', at: d.at, who: d.target, via: `${d.channel} (attempt ${d.attempt})`, ...(d.error ? { reason: d.error } : {}) });
    const decision = gate.decision;
    if (decision?.approver === null) entries.push({ step, event: 'timed_out', at: decision.at, who: null, via: 'timeout', reason: decision.reason });
    else if (decision) entries.push({ step, event: decision.decision, at: decision.at, who: decision.approver, via: 'consent endpoint', reason: decision.reason });
  }
  // Entries without a time (a suspend timeout) go last.
  return entries.sort((a, b) => (a.at ?? '\uffff').localeCompare(b.at ?? '\uffff'));
}

/**
 * Spec 2.6: a step that returns its resume URL is a prompt — whoever runs the flow sees it (and may
 * approve it themselves) with its prefills, choices and description.
 */
function promptOf(result: unknown): { prompt?: Record<string, unknown> } {
  if (!result || typeof result !== 'object' || typeof (result as { resume?: unknown }).resume !== 'string') return {};
  const r = result as Record<string, unknown>;
  const keys = ['resume', 'cancel', 'approvalPage', 'default_args', 'enums', 'description'] as const;
  return { prompt: Object.fromEntries(keys.filter((k) => r[k] !== undefined).map((k) => [k, r[k]])) };
}

/** The run of a flow job, for views and resume checks. */
export async function getFlowRun(deps: Pick<CoreDeps, 'store'>, workspaceId: string, flowJobId: string): Promise<FlowRun | null> {
  return getEntityValue(deps.store, 'flow_run', workspaceId, flowJobId);
}
