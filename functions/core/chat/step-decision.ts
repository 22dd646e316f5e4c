import { ApiError, conflict } from '../common/errors.js';
import { approvalBlocker, approvalState, resumeSignature, resumeStep, suspendContext, type ResumeRequest } from '../approvals/resume.js';
import type { ChatMessage } from '../flows/run-state.js';
import type { Principal } from '../identity/auth.js';
import type { CoreDeps } from '../deps.js';
import type { FormSchema } from './slack-blocks.js';

/**
 * A chat click on an approval step's message, whatever the chat app: the message's `approver`, then
 * the step's own rules (the resume URL's: login, no self-approval, groups, a person counts once),
 * then the decision through resumeStep, as a resume or cancel URL would carry it.
 */

/** The svc user a chat user was mapped to, and how the chat app calls them (for the outcome). */
export interface ChatUser {
  principal: Principal;
  email: string;
  handle: string;
}

export interface StepCheck {
  req: ResumeRequest;
  form: FormSchema | null;
  hideCancel: boolean;
}

type Deps = Pick<CoreDeps, 'store' | 'clock' | 'config' | 'flows'>;
type StepTarget = Extract<ChatMessage['target'], { kind: 'step' }>;

/** Throws the 4xx that refuses `user`; else what deciding needs. */
export async function checkStepDecider(deps: Deps, workspaceId: string, message: ChatMessage, target: StepTarget, user: ChatUser): Promise<StepCheck> {
  if (message.approver && !isUser(message.approver, user)) throw new ApiError(403, 'not_an_approver', `only ${message.approver} may decide this approval`);
  const key = { workspaceId, stepJobId: target.step_job, resumeId: target.resume_id, approver: message.approver, flowLevel: false };
  // The service made this message's resume id: it signs it as it signs the step's resume URLs.
  const req: ResumeRequest = { ...key, signature: resumeSignature(deps.config.signingKey, key), principal: user.principal };
  const ctx = await suspendContext(deps, req);
  if (approvalState(ctx.run, target.step_job, ctx.settings.required_events) !== 'waiting') throw conflict('this approval step is no longer waiting: it was decided already');
  const blocker = await approvalBlocker(deps, ctx, user.principal);
  if (blocker) throw blocker;
  return { req, form: ctx.settings.resume_form?.schema ?? null, hideCancel: ctx.settings.hide_cancel };
}

export interface ChatOutcome {
  decision: NonNullable<ChatMessage['decision']>;
  /** What the message says once decided. */
  text: string;
  /** Whether the step is settled, so its other messages can say so too. */
  closed: boolean;
}

export async function approveStep(deps: Deps, check: StepCheck, user: ChatUser, payload: unknown): Promise<ChatOutcome> {
  const counted = await resumeStep(deps, check.req, { kind: 'approve', payload });
  const at = deps.clock.now().toISOString();
  const tally = counted.approvals_required > 1 ? ` (${counted.approvals_received} of ${counted.approvals_required} approvals)` : '';
  return { decision: { decision: 'approved', by: user.principal.username, at }, text: `Approved by ${who(user)} at ${at}${tally}`, closed: counted.approvals_received >= counted.approvals_required };
}

export async function rejectStep(deps: Deps, check: StepCheck, user: ChatUser, app: string): Promise<ChatOutcome> {
  await resumeStep(deps, check.req, { kind: 'cancel', reason: `rejected in ${app} by ${user.principal.username}` });
  const at = deps.clock.now().toISOString();
  return { decision: { decision: 'rejected', by: user.principal.username, at }, text: `Rejected by ${who(user)} at ${at}`, closed: true };
}

export function who(user: ChatUser): string {
  return `${user.principal.username} (${user.handle})`;
}

function isUser(approver: string, user: ChatUser): boolean {
  return approver === user.principal.username || approver.toLowerCase() === user.email.toLowerCase();
}
