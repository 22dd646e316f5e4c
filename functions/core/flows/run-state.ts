import { getEntityValue } from '../store/entities.js';
import { resolveRun } from './flow-run-document.js';
import type { CoreDeps } from '../deps.js';
import { approvalsReceived, FLOW_LEVEL } from '../approvals/approval-count.js';
import type { FlowRun } from './flow-documents.js';

/**
 * Reading a flow job's run state (the `flow_run` document, whose shape is in flow-documents.ts):
 * its outcome, what expressions see, and the status and approval views built from it.
 */

// The flow and step modules import the run's types from here.
export type { Approval, ChatDelivery, ChatMessage, FlowFailure, FlowRun, FlowStep, FlowStop, GateDecision, GateDelivery, GateState, StepAttempt, StepEvents } from './flow-documents.js';

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

/**
 * The run of a flow job, for views and resume checks, which evaluate no expression: a branch's or
 * iteration's run comes without its enclosing run's results (`outer_results` empty), which 200
 * iterations listed for the run page would otherwise each read again. The interpreter reads
 * runs with them (run-cache.ts).
 */
export async function getFlowRun(deps: Pick<CoreDeps, 'store'>, workspaceId: string, flowJobId: string): Promise<FlowRun | null> {
  const doc = await getEntityValue(deps.store, 'flow_run', workspaceId, flowJobId);
  return doc && resolveRun(deps.store, workspaceId, doc, null);
}
