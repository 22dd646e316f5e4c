import { ApiError, conflict, notFound } from '../common/errors.js';
import { approveStep, checkStepDecider, rejectStep, who, type ChatOutcome, type ChatUser } from './step-decision.js';
import { settleMessage } from './outcomes.js';
import { consentDecider, decideConsent } from '../approvals/consent.js';
import { getFlowRun, type ChatMessage, type FlowRun } from '../flows/run-state.js';
import { callSlack } from './slack-api.js';
import { buttonValue, formModal, reasonModal, submittedValues } from './slack-blocks.js';
import { findMessage } from './chat-messages.js';
import { chatConnectionsOf, type SlackConnection } from './chat-settings.js';
import { assertFresh, isSignedBy, signatureRefused, type SignedRequest } from './slack-signature.js';
import { parseInteraction, submittedReason, type Interaction } from './slack-interaction.js';
import { chatUser } from './slack-user.js';
import type { CoreDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/**
 * Slack's callbacks (`POST /api/w/{ws}/chat/slack/interactions`): a click or a submitted modal
 * carries a decision in, and the approval rules of core/flows decide it exactly as they decide a
 * resume URL or the consent endpoint (docs/approvals.md, "Who decides"). In order, who asks
 * before anything about what they name: a stale request, or one no Slack app connected to the
 * workspace (chat-settings.ts, set up by an admin) signed, is 401 whatever it names; then the
 * message the button names must be one of the workspace's (else 404) and posted through the app
 * that signed (else 401); the clicking Slack user is mapped to a svc user by the email that app's
 * own bot token reads from Slack; then the step's or gate's rules. A refused
 * click gets a 4xx and an ephemeral message in the channel saying why, and changes nothing.
 */

export type CallbackAnswer = { status: 200; body: Record<string, unknown> | null };

const NONE: CallbackAnswer = { status: 200, body: null };

export async function handleSlackCallback(deps: CoreDeps, workspaceId: string, req: SignedRequest): Promise<CallbackAnswer> {
  assertFresh(req, deps.clock.now().getTime());
  const signedBy = (await chatConnectionsOf(deps, workspaceId, 'slack')).filter((c) => isSignedBy(req, c.signingSecret));
  if (signedBy.length === 0) throw signatureRefused('X-Slack-Signature does not match the request: no Slack app connected to this workspace signed it');
  const interaction = parseInteraction(req.rawBody);
  const flowJob = await deps.store.getJob(workspaceId, interaction.flowJobId);
  const run = flowJob?.kind === 'flow' ? await getFlowRun(deps, workspaceId, flowJob.id) : null;
  const message = findMessage(run, interaction.messageId);
  if (!flowJob || !run || !message || message.platform !== 'slack') throw notFound('chat approval message');
  const conn = signedBy.find((c) => c.name === message.connection);
  if (!conn) throw signatureRefused('X-Slack-Signature is not that of the Slack app this message was posted through');
  const act = { deps, conn, flowJob, run, message, interaction };
  try {
    const user = await chatUser(deps, conn, workspaceId, interaction.slackUser);
    if (message.decision) throw conflict(`this approval was already decided: ${message.decision.decision} by ${message.decision.by}`);
    return message.target.kind === 'step' ? await decideStep(act, message.target, user) : await decideGate(act, user);
  } catch (e) {
    if (e instanceof ApiError && e.status >= 400 && e.status < 500) await tell(deps, conn, message, interaction.slackUser, `Not done: ${e.message}`);
    throw e;
  }
}

interface Act {
  deps: CoreDeps;
  conn: SlackConnection;
  flowJob: Job;
  run: FlowRun;
  message: ChatMessage;
  interaction: Interaction;
}

async function decideStep(act: Act, target: Extract<ChatMessage['target'], { kind: 'step' }>, user: ChatUser): Promise<CallbackAnswer> {
  const { deps, message, interaction } = act;
  const check = await checkStepDecider(deps, act.flowJob.workspace_id, message, target, user);
  if (interaction.kind === 'click' && interaction.action === 'approve' && check.form) {
    await openModal(act, interaction.triggerId, formModal(check.form, message, buttonValue(act.flowJob.id, message.id)));
    return NONE;
  }
  if (interaction.kind === 'submit' && interaction.modal !== 'form') throw new ApiError(400, 'invalid_payload', 'this approval has no reject modal');
  if (interaction.kind === 'click' && interaction.action === 'reject') {
    await settle(act, await rejectStep(deps, check, user, 'Slack'));
    return NONE;
  }
  const payload = interaction.kind === 'submit' ? submittedValues(check.form, interaction.state) : {};
  if (payload === null) throw new ApiError(400, 'invalid_payload', 'payload.view.state: not the values of this form');
  try {
    await settle(act, await approveStep(deps, check, user, payload));
  } catch (e) {
    // A form's own complaint goes back into the modal, beside the field, as Slack expects.
    const field = e instanceof ApiError && e.status === 400 ? e.details?.field : undefined;
    if (interaction.kind === 'submit' && typeof field === 'string') return { status: 200, body: { response_action: 'errors', errors: { [field]: (e as Error).message } } };
    throw e;
  }
  return NONE;
}

async function decideGate(act: Act, user: ChatUser): Promise<CallbackAnswer> {
  const { deps, flowJob, message, interaction } = act;
  // The consent endpoint's checks: an approver of the gate, not the triggering user unless allowed.
  await consentDecider(deps, user.principal, flowJob.id);
  const at = deps.clock.now().toISOString();
  if (interaction.kind === 'click' && interaction.action === 'reject') {
    await openModal(act, interaction.triggerId, reasonModal(message, buttonValue(flowJob.id, message.id)));
    return NONE;
  }
  if (interaction.kind === 'submit' && interaction.modal !== 'reason') throw new ApiError(400, 'invalid_payload', 'this consent gate has no form');
  if (interaction.kind === 'submit') {
    const reason = submittedReason(interaction.state);
    if (!reason) return { status: 200, body: { response_action: 'errors', errors: { reason: 'a rejection needs a reason' } } };
    await decideConsent(deps, user.principal, flowJob.id, { decision: 'rejected', reason });
    await settle(act, { decision: { decision: 'rejected', by: user.principal.username, at, reason }, text: `Rejected by ${who(user)} at ${at}: ${reason}`, closed: true });
    return NONE;
  }
  await decideConsent(deps, user.principal, flowJob.id, { decision: 'approved' });
  await settle(act, { decision: { decision: 'approved', by: user.principal.username, at }, text: `Approved by ${who(user)} at ${at}`, closed: true });
  return NONE;
}

async function settle(act: Act, outcome: ChatOutcome): Promise<void> {
  await settleMessage(act.deps, act.flowJob, act.message, outcome);
}

async function openModal(act: Act, triggerId: string, view: Record<string, unknown>): Promise<void> {
  // A trigger id expires three seconds after the click: one attempt, no retries.
  await callSlack(act.deps, act.conn, 'views.open', { trigger_id: triggerId, view }, { attempts: 1 }).catch((e: Error) => {
    throw new ApiError(503, 'upstream_unavailable', `the form could not be opened in Slack: ${e.message}`);
  });
}

/** An ephemeral message to the clicking user only; a failure to tell them changes nothing. */
async function tell(deps: CoreDeps, conn: SlackConnection, message: ChatMessage, slackUser: string, text: string): Promise<void> {
  await callSlack(deps, conn, 'chat.postEphemeral', { channel: message.channel, user: slackUser, text: text.slice(0, 3000) }, { attempts: 1 }).catch(() => undefined);
}
