import { ApiError, badRequest, conflict, notFound } from '../common/errors.js';
import { getFlowRun, type ChatMessage } from '../flows/run-state.js';
import { findMessage } from './chat-messages.js';
import { parseButtonValue } from './slack-blocks.js';
import { approveStep, checkStepDecider, rejectStep, who, type ChatOutcome, type ChatUser } from './step-decision.js';
import { decideConsent } from '../approvals/consent.js';
import { settleMessage } from './outcomes.js';
import { svcUserByEmail } from './slack-user.js';
import { APPROVE_VERB, cardValues, decidedCard, REASON_INPUT, REF, REJECT_VERB } from './teams-cards.js';
import { callConnector } from './teams-api.js';
import { chatConnectionsOf, type TeamsConnection } from './chat-settings.js';
import { assertBotFrameworkToken } from './teams-jwt.js';
import type { CoreDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/**
 * Teams' callbacks (`POST /api/w/{ws}/chat/teams/messages`, the bot's messaging endpoint): an
 * `adaptiveCard/action` invoke from a card's Approve / Reject (an approval step's, or a ConsentGate's,
 * whose card asks the reason a rejection needs). In order, who asks before anything about what
 * they name: a Bot Framework token valid for a bot connected to the workspace (chat-settings.ts, set
 * up by an admin) whatever the activity names (else 401); then the activity must name a card of
 * the workspace's (else 400 / 404) posted by that bot (else 401); the clicking user is mapped to
 * a svc user by the email that bot's connector gives for them; then the
 * step's rules, as for Slack. The answer replaces the card with its outcome; a refusal past the
 * token check (not an approver, already decided) is a Universal Actions error, which Teams shows to
 * the one who clicked.
 */

export type TeamsAnswer = { status: 200 | ApiError['status']; body: Record<string, unknown> };

export async function handleTeamsCallback(deps: CoreDeps, workspaceId: string, req: { authorization: string | undefined; rawBody: string }): Promise<TeamsAnswer> {
  if (!req.authorization) throw new ApiError(401, 'unauthorized', 'a Teams call needs Authorization: Bearer <Bot Framework token>');
  const verifiedFor = await botsVerifying(deps, workspaceId, req.authorization, serviceUrlOf(req.rawBody));
  const activity = parseActivity(req.rawBody);
  const flowJob = await deps.store.getJob(workspaceId, activity.ref.flowJobId);
  const run = flowJob?.kind === 'flow' ? await getFlowRun(deps, workspaceId, flowJob.id) : null;
  const message = findMessage(run, activity.ref.messageId);
  if (!flowJob || !message || message.platform !== 'teams') throw notFound('chat approval card');
  const conn = verifiedFor.find((c) => c.name === message.connection);
  if (!conn) throw new ApiError(401, 'unauthorized', 'the Bot Framework token is not for the bot this card was posted by');
  try {
    return await decide(deps, workspaceId, conn, flowJob, message, activity);
  } catch (e) {
    // Past the token check the caller is Teams itself, showing our answer to the one who clicked:
    // a Universal Actions error says why (not the approver, already decided) in the card.
    if (!(e instanceof ApiError) || e.status >= 500) throw e;
    return { status: e.status, body: { statusCode: e.status, type: 'application/vnd.microsoft.error', value: { code: e.code, message: e.message } } };
  }
}

/** The workspace's bots the token is valid for; 401 when none (the last refusal says why). */
async function botsVerifying(deps: CoreDeps, workspaceId: string, authorization: string, serviceUrl: unknown): Promise<TeamsConnection[]> {
  const verified: TeamsConnection[] = [];
  let refusal: unknown = new ApiError(401, 'unauthorized', 'no Teams bot is connected to this workspace');
  for (const conn of await chatConnectionsOf(deps, workspaceId, 'teams')) {
    try {
      await assertBotFrameworkToken(deps, conn, authorization, serviceUrl);
      verified.push(conn);
    } catch (e) {
      refusal = e;
    }
  }
  if (verified.length === 0) throw refusal;
  return verified;
}

/** The activity's `serviceUrl` (which the token must name), read before the activity itself is judged. */
function serviceUrlOf(rawBody: string): unknown {
  try {
    const a: unknown = JSON.parse(rawBody);
    return isRecord(a) ? a.serviceUrl : undefined;
  } catch {
    return undefined;
  }
}

async function decide(deps: CoreDeps, workspaceId: string, conn: TeamsConnection, flowJob: Job, message: ChatMessage, activity: CardAction): Promise<TeamsAnswer> {
  const member = await callConnector(deps, conn, 'GET', `/v3/conversations/${encodeURIComponent(activity.conversationId)}/members/${encodeURIComponent(activity.userId)}`).catch((e: Error) => {
    throw new ApiError(403, 'unknown_user', `your Teams account could not be looked up (${e.message}), so it maps to no svc user`);
  });
  const email = typeof member.email === 'string' ? member.email : typeof member.userPrincipalName === 'string' ? member.userPrincipalName : null;
  if (!email) throw new ApiError(403, 'unknown_user', 'your Teams account shows no email, so it maps to no svc user');
  const user = await svcUserByEmail(deps, workspaceId, email, typeof member.name === 'string' ? member.name : email);
  if (message.decision) throw conflict(`this approval was already decided: ${message.decision.decision} by ${message.decision.by}`);
  const outcome = message.target.kind === 'gate' ? await decideGate(deps, flowJob.id, user, activity) : await decideStep(deps, workspaceId, message, message.target, user, activity);
  await settleMessage(deps, flowJob, message, outcome, { shown: true });
  // Universal Actions: an adaptive card in the invoke response replaces the card for everyone.
  return { status: 200, body: { statusCode: 200, type: 'application/vnd.microsoft.card.adaptive', value: decidedCard(message, outcome.text) } };
}

async function decideStep(deps: CoreDeps, workspaceId: string, message: ChatMessage, target: Extract<ChatMessage['target'], { kind: 'step' }>, user: ChatUser, activity: CardAction): Promise<ChatOutcome> {
  const check = await checkStepDecider(deps, workspaceId, message, target, user);
  return activity.verb === 'reject' ? rejectStep(deps, check, user, 'Teams') : approveStep(deps, check, user, cardValues(check.form, activity.data));
}

/** A ConsentGate, by the consent endpoint's rules; a rejection's reason comes from the card's field. */
async function decideGate(deps: CoreDeps, runId: string, user: ChatUser, activity: CardAction): Promise<ChatOutcome> {
  const reason = typeof activity.data[REASON_INPUT] === 'string' ? activity.data[REASON_INPUT].trim() : '';
  const decided = await decideConsent(deps, user.principal, runId, activity.verb === 'reject' ? { decision: 'rejected', reason } : { decision: 'approved', ...(reason ? { reason } : {}) });
  const { decision, approver, at } = decided.decision;
  const text = `${decision === 'approved' ? 'Approved' : 'Rejected'} by ${who(user)} at ${at}${decided.decision.reason ? `: ${decided.decision.reason}` : ''}`;
  return { decision: { decision, by: approver ?? user.principal.username, at, ...(decided.decision.reason ? { reason: decided.decision.reason } : {}) }, text, closed: true };
}

interface CardAction {
  verb: 'approve' | 'reject';
  ref: { flowJobId: string; messageId: string };
  data: Record<string, unknown>;
  userId: string;
  conversationId: string;
  serviceUrl: unknown;
}

function parseActivity(rawBody: string): CardAction {
  let a: unknown;
  try {
    a = JSON.parse(rawBody);
  } catch {
    throw badRequest('invalid_payload', 'the body is not a JSON activity');
  }
  if (!isRecord(a) || a.type !== 'invoke' || a.name !== 'adaptiveCard/action') throw badRequest('invalid_payload', 'only adaptiveCard/action invokes are handled here');
  const action = isRecord(a.value) && isRecord(a.value.action) ? a.value.action : {};
  if (action.verb !== APPROVE_VERB && action.verb !== REJECT_VERB) throw badRequest('invalid_payload', 'value.action.verb: not an action of this service');
  const data = isRecord(action.data) ? action.data : {};
  const ref = parseButtonValue(data[REF]);
  if (!ref) throw badRequest('invalid_payload', `value.action.data.${REF}: not a chat approval of this service`);
  const userId = isRecord(a.from) ? a.from.id : undefined;
  const conversationId = isRecord(a.conversation) ? a.conversation.id : undefined;
  if (typeof userId !== 'string' || !userId || typeof conversationId !== 'string' || !conversationId) throw badRequest('invalid_payload', 'from.id and conversation.id are required');
  return { verb: action.verb === APPROVE_VERB ? 'approve' : 'reject', ref, data, userId, conversationId, serviceUrl: a.serviceUrl };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
