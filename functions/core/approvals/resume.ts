import { createHmac } from 'node:crypto';
import { sameSignature } from '../common/crypto.js';
import { ApiError, conflict, notFound } from '../common/errors.js';
import { updateEntity } from '../store/entities.js';
import { assertPerson, personBlocker, ruleGroups } from './approval-rules.js';
import { approvalRefusal, approvalsReceived, approvedAlready, FLOW_LEVEL, resumeIdUsed, isListed, refusalError, stepRules, type StepRules } from './approval-count.js';
import type { Rights } from '../identity/permissions.js';
import { findModule, suspendSettings, type SuspendSettings } from '../flows/definition.js';
import { assertFormFields } from './resume-form.js';
import { refuseReferences } from '../workspace/bindings.js';
import { findFlowVersion } from '../flows/flows.js';
import { getFlowRun, type FlowRun } from '../flows/run-state.js';
import type { Principal } from '../identity/auth.js';
import type { CoreDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/**
 * Resume and cancel URLs of approval steps (spec 4.8, 5.6, 7.4). A URL names the step job, a
 * resume id and optionally an approver, and carries an HMAC of them under the instance key: only
 * holders can act, a changed URL is refused with nothing changed, and each resume id counts once.
 */

export interface ResumeUrls {
  resume: string;
  cancel: string;
  approvalPage: string;
}

/** What a resume URL names, all of it covered by its signature. */
export interface ResumeKey {
  workspaceId: string;
  stepJobId: string;
  resumeId: number;
  approver: string | null;
  /** A pre-approval for the flow: any later suspend step of it may count it (spec 3, 4.9). */
  flowLevel: boolean;
}

export function resumeSignature(key: Uint8Array, k: ResumeKey): string {
  return createHmac('sha256', key).update(`resume\n${k.workspaceId}\n${k.stepJobId}\n${k.resumeId}\n${k.approver ?? ''}\n${k.flowLevel ? 'flow' : 'step'}`).digest('hex');
}

export function resumeUrls(deps: Pick<CoreDeps, 'config'>, k: ResumeKey): ResumeUrls {
  const signature = resumeSignature(deps.config.signingKey, k);
  const base = deps.config.baseInternalUrl;
  const query = new URLSearchParams({ ...(k.approver ? { approver: k.approver } : {}), ...(k.flowLevel ? { flow_level: 'true' } : {}) }).toString();
  const tail = `${k.stepJobId}/${k.resumeId}/${signature}${query ? `?${query}` : ''}`;
  return {
    resume: `${base}/api/w/${k.workspaceId}/jobs_u/resume/${tail}`,
    cancel: `${base}/api/w/${k.workspaceId}/jobs_u/cancel/${tail}`,
    approvalPage: `${base}/approve/${k.workspaceId}/${tail}`,
  };
}

/** What the client libraries' getResumeUrls calls: the URLs for a step job the caller may see. */
export async function getResumeUrls(deps: Pick<CoreDeps, 'store' | 'config'>, rights: Rights, k: Omit<ResumeKey, 'workspaceId'>): Promise<ResumeUrls> {
  const job = await deps.store.getJob(rights.workspaceId, k.stepJobId);
  // A job the caller may not read answers as an unknown id.
  if (!job || !rights.canJob(job, 'read')) throw notFound(`job ${k.stepJobId}`);
  return resumeUrls(deps, { ...k, workspaceId: rights.workspaceId });
}

export interface ResumeRequest extends ResumeKey {
  signature: string;
  /** The logged-in caller, if any (session cookie or token). */
  principal: Principal | null;
  /**
   * A GET (a followed link, or a request another page made the browser send): it never decides as
   * the session cookie's person, so where the step needs a login it decides nothing and points to
   * the approval page, whose POST does.
   */
  byGet?: boolean;
}

export interface SuspendContext {
  flowJob: Job;
  stepJob: Job;
  run: FlowRun;
  moduleId: string;
  /** The rules that apply: the URL's step's, or for a pre-approval those of the step the flow waits at. */
  settings: SuspendSettings;
  /** The step job whose rules apply (its evaluated groups among them). */
  rulesJob: string;
}

/** Checks the signature and finds the suspended step; 403 for a bad signature, 404 when unknown. */
export async function suspendContext(deps: Pick<CoreDeps, 'store' | 'config'>, req: ResumeRequest): Promise<SuspendContext> {
  if (!sameSignature(req.signature, resumeSignature(deps.config.signingKey, req))) {
    throw new ApiError(403, 'invalid_signature', 'this resume URL is not valid: its signature does not match');
  }
  const stepJob = await deps.store.getJob(req.workspaceId, req.stepJobId);
  const flowJob = stepJob?.parent_job ? await deps.store.getJob(req.workspaceId, stepJob.parent_job) : null;
  const run = flowJob ? await getFlowRun(deps, req.workspaceId, flowJob.id) : null;
  const moduleId = run?.step_modules[req.stepJobId];
  const module = run && moduleId ? findModule(run.modules, moduleId) : undefined;
  // A pre-approval may come from any step; a step's own URLs only from one that suspends.
  if (!stepJob || !flowJob || !run || !moduleId || (!module?.suspend && !req.flowLevel)) throw notFound(`approval step ${req.stepJobId}`);
  // A pre-approval is held to the rules of the step that will count it, once the flow waits there.
  const waitingAt = req.flowLevel && run.step?.kind === 'suspend' ? run.step : null;
  const rules = waitingAt ? findModule(run.modules, waitingAt.module)?.suspend : module?.suspend;
  return { flowJob, stepJob, run, moduleId, settings: rules ?? suspendSettings.parse({}), rulesJob: waitingAt?.resume_job ?? stepJob.id };
}

/**
 * The rules of the applicable step; the groups of an expression are known once the flow reached
 * the step (until then nobody may approve).
 */
function contextRules(ctx: SuspendContext): StepRules {
  const step = ctx.run.step;
  const groups = ruleGroups(ctx.settings, step?.kind === 'suspend' && step.resume_job === ctx.rulesJob ? step.groups : undefined);
  return stepRules(ctx.settings, groups, ctx.flowJob.created_by);
}

/**
 * Why this caller may not approve, or null (spec 2.4 options, 7.4): only logged-in users, not the
 * user who triggered the flow, only members of the given groups.
 */
export async function approvalBlocker(deps: Pick<CoreDeps, 'store'>, ctx: SuspendContext, principal: Principal | null): Promise<ApiError | null> {
  const workspaceId = ctx.flowJob.workspace_id;
  if (principal) {
    const notPerson = await personBlocker(deps, principal, workspaceId);
    if (notPerson) return notPerson;
  }
  const rules = contextRules(ctx);
  const username = principal?.username ?? '';
  // personBlocker found the caller a member; their groups are read only where they matter.
  const listed = principal !== null && rules.loginRequired && (await isListed(deps, workspaceId, rules, username));
  const refusal = approvalRefusal(rules, username, { loggedIn: principal !== null, member: true, listed });
  return refusal && refusalError(refusal, rules, username, workspaceId);
}

export interface ResumeOutcome {
  approvals_received: number;
  approvals_required: number;
}

/** Counts an approval (or records a cancel) and wakes the flow; a resume id counts once. */
export async function resumeStep(
  deps: Pick<CoreDeps, 'store' | 'clock' | 'config' | 'flows'>,
  req: ResumeRequest,
  action: { kind: 'approve'; payload: unknown } | { kind: 'cancel'; reason: string },
): Promise<ResumeOutcome> {
  // Who asks is checked before anything about what the URL names.
  if (req.principal) await assertPerson(deps, req.principal, req.workspaceId);
  const ctx = await suspendContext(deps, req);
  const blocker = await approvalBlocker(deps, ctx, req.principal);
  if (blocker) throw req.byGet && blocker.status === 401 ? confirmOnPage(deps, req) : blocker;
  if (action.kind === 'cancel' && ctx.settings.hide_cancel) throw new ApiError(403, 'cancel_hidden', 'this approval step cannot be canceled');
  // A cancel's reason reaches the next steps too when the step goes on after a cancel (continue_on_error).
  if (action.kind === 'cancel') refuseReferences({ reason: action.reason }, "a cancel's reason may reach the flow's next steps, which would read it as the flow's creator. Write the reason itself");
  if (action.kind === 'approve') assertFormFields(ctx.settings, action.payload, req.byGet === true);
  // The approver's values reach the flow's next steps, which resolve references as the flow's creator.
  if (action.kind === 'approve') refuseReferences(action.payload !== null && typeof action.payload === 'object' && !Array.isArray(action.payload) ? (action.payload as Record<string, unknown>) : { payload: action.payload }, "an approval's values reach the flow's next steps, which would read it as the flow's creator. Send the value itself");
  // With a login required, approvals are people: one person counts once whichever URLs they use.
  const person = req.principal && contextRules(ctx).loginRequired ? req.principal.username : null;
  const approver = req.principal?.username ?? req.approver ?? 'anonymous';
  const at = deps.clock.now().toISOString();
  const key = eventsKey(req);
  const stored = await updateEntity(deps.store, deps.clock, 'flow_run', req.workspaceId, ctx.flowJob.id, `flow run ${ctx.flowJob.id}`, (run) => {
    if (run.status === 'finished') throw conflict('the flow already finished');
    const step = run.step;
    if (!req.flowLevel && step?.kind === 'suspend' && step.resume_job !== req.stepJobId) throw conflict('the flow is no longer waiting for this step');
    const events = run.events[key] ?? { approvals: [] };
    if (events.cancel) throw conflict('this approval step was already canceled');
    if (action.kind === 'cancel') {
      events.cancel = { by: approver, reason: action.reason, at };
    } else {
      const used = resumeIdUsed(run, req.resumeId);
      if (used) throw conflict('this resume URL was already used: it counts once');
      if (person && approvedAlready(run, key, person)) throw conflict(`${person} already approved this step: a person counts once`);
      assertRoomForApproval(run, action.payload);
      events.approvals.push({ resume_id: req.resumeId, approver, payload: action.payload, at, logged_in: req.principal !== null });
    }
    return { ...run, events: { ...run.events, [key]: events } };
  });
  await deps.flows.wake(req.workspaceId, ctx.flowJob.id);
  return {
    approvals_received: approvalsReceived(stored.value, key),
    approvals_required: ctx.settings.required_events,
  };
}

/**
 * What a run keeps of its approvals, all of them written again with each of its turns: whoever may
 * read a step job can mint resume URLs with new resume ids (getResumeUrls), so without a bound one
 * member's requests of 10 MB each would grow one run document until it no longer fits in a string.
 */
export const MAX_APPROVALS_PER_RUN = 1000;
/** Characters of JSON of every approval's payload (a resume form's values) together. */
export const MAX_APPROVAL_PAYLOAD_CHARS = 1024 * 1024;

function assertRoomForApproval(run: Pick<FlowRun, 'events'>, payload: unknown): void {
  const approvals = Object.values(run.events).flatMap((e) => e.approvals);
  if (approvals.length >= MAX_APPROVALS_PER_RUN) throw conflict(`this flow run has ${MAX_APPROVALS_PER_RUN} approvals, the most a run keeps`);
  let chars = JSON.stringify(payload ?? null).length;
  for (const a of approvals) chars += JSON.stringify(a.payload ?? null).length;
  if (chars > MAX_APPROVAL_PAYLOAD_CHARS) {
    throw new ApiError(413, 'payload_too_large', `the approvals' payloads of this flow run would be more than ${MAX_APPROVAL_PAYLOAD_CHARS} characters of JSON together, the most a run keeps`, { limit: MAX_APPROVAL_PAYLOAD_CHARS });
  }
}

/** A GET that cannot decide (the step needs a login): the approval page decides, with a POST. */
function confirmOnPage(deps: Pick<CoreDeps, 'config'>, req: ResumeRequest): ApiError {
  const page = resumeUrls({ config: { ...deps.config, baseInternalUrl: '' } }, req).approvalPage;
  return new ApiError(403, 'confirm_on_page', `a GET of a resume or cancel URL decides as nobody signed in, and this step needs a login: open its approval page ${page} and decide there`, {
    approval_page: page,
  });
}

/** With a login required, whether the viewer approved the step already through another of its URLs. */
function alreadyApprovedBy(ctx: SuspendContext, req: ResumeRequest): boolean {
  const person = req.principal?.username;
  if (!person || !contextRules(ctx).loginRequired) return false;
  return approvedAlready(ctx.run, eventsKey(req), person);
}

/** A step's own approvals are kept under its job id; pre-approvals under the flow's. */
function eventsKey(req: ResumeKey): string {
  return req.flowLevel ? FLOW_LEVEL : req.stepJobId;
}

/** What the approval page shows (spec 2.4-2.6), decided here; the page only renders it. */
export interface ApprovalView {
  flowPath: string;
  flowSummary: string;
  stepId: string;
  stepSummary: string;
  triggeredBy: string;
  approvalsReceived: number;
  approvalsRequired: number;
  /** The step's `description` (spec 2.6): a string, or `{ render_all: [...] }` (markdown, map, html, tables, images). */
  description: unknown;
  /** `suspend.resume_form.schema`: properties (type, description, default, enum, items, format), required, order. */
  formSchema: { properties: Record<string, Record<string, unknown>>; required?: string[]; order?: string[] } | null;
  /** Prefill values by field (spec 2.6 default_args) and runtime choices (enums) overriding the schema's. */
  defaultArgs: Record<string, unknown>;
  enums: Record<string, string[]>;
  hideCancel: boolean;
  /** waiting: the form and buttons; the others say what happened, without buttons. */
  state: 'waiting' | 'resumed' | 'canceled' | 'timed_out' | 'finished';
  /** Why this viewer may not approve; the buttons are hidden and the reason shown. */
  blockedReason: string | null;
  /** Whether logging in could lift the block. */
  loginWouldHelp: boolean;
}

export async function approvalView(deps: Pick<CoreDeps, 'store' | 'config'>, req: ResumeRequest): Promise<ApprovalView> {
  const ctx = await suspendContext(deps, req);
  const { run, settings, stepJob, flowJob, moduleId } = ctx;
  const module = findModule(run.modules, moduleId);
  const version = await findFlowVersion(deps.store, req.workspaceId, run.version);
  // Spec 2.6: the step's own result may carry the page's description, prefills and choices.
  const prompt = isRecord(stepJob.result) ? stepJob.result : {};
  const blocker = await approvalBlocker(deps, ctx, req.principal);
  const used = resumeIdUsed(run, req.resumeId);
  const approvedBefore = !used && blocker === null && alreadyApprovedBy(ctx, req);
  return {
    flowPath: flowJob.script_path,
    flowSummary: version?.summary ?? '',
    stepId: moduleId,
    stepSummary: module?.summary ?? '',
    triggeredBy: flowJob.created_by,
    approvalsReceived: approvalsReceived(run, eventsKey(req)),
    approvalsRequired: settings.required_events,
    description: prompt.description ?? null,
    formSchema: settings.resume_form?.schema ?? null,
    defaultArgs: isRecord(prompt.default_args) ? prompt.default_args : {},
    enums: stringLists(prompt.enums),
    hideCancel: settings.hide_cancel,
    // A pre-approval waits for a later step: its page stays open until the flow ends.
    state: req.flowLevel ? (run.status === 'finished' ? 'finished' : 'waiting') : approvalState(run, req.stepJobId, settings.required_events),
    blockedReason:
      blocker?.message ??
      (used ? 'this link was already used to approve: it counts once' : approvedBefore ? `you already approved this step as ${req.principal?.username}: a person counts once` : null),
    loginWouldHelp: blocker?.status === 401,
  };
}

/** Where the approval of one step job stands, as its page shows it. */
export function approvalState(run: FlowRun, stepJobId: string, required: number): ApprovalView['state'] {
  const events = run.events[stepJobId];
  if (events?.cancel) return 'canceled';
  const step = run.step;
  // Approvals may come in while the step itself still runs, before the flow suspends.
  const here = (step?.kind === 'suspend' && step.resume_job === stepJobId) || (step?.kind === 'child' && step.job.id === stepJobId);
  if (here && run.status !== 'finished') return 'waiting';
  if (events?.resumed || approvalsReceived(run, stepJobId) >= required) return 'resumed';
  if (events?.timed_out) return 'timed_out';
  return 'finished';
}

/** The choices a step's result offers per field; entries that are not lists of strings are left out. */
function stringLists(value: unknown): Record<string, string[]> {
  if (!isRecord(value)) return {};
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string[]] => Array.isArray(e[1]) && e[1].every((s) => typeof s === 'string')));
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
