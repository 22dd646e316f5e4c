import { ApiError, badRequest, conflict, notFound } from '../errors.js';
import { getFlowRun } from '../flows/run-state.js';
import { findMessage } from './chat-messages.js';
import { parseButtonValue } from './slack-blocks.js';
import { approveStep, checkStepDecider, rejectStep } from './step-decision.js';
import { settleMessage } from './outcomes.js';
import { svcUserByEmail } from './slack-user.js';
import { APPROVE_VERB, cardValues, decidedCard, REF, REJECT_VERB } from './teams-cards.js';
import { callConnector } from './teams-api.js';
import { readTeamsConnection } from './teams-connection.js';
import { assertBotFrameworkToken } from './teams-jwt.js';
import { runRights } from './run-identity.js';
import type { CoreDeps } from '../deps.js';

/**
 * Teams' callbacks (`POST /api/w/{ws}/chat/teams/messages`, the bot's messaging endpoint): an
 * `adaptiveCard/action` invoke from a card's Approve / Reject. In order: the activity must name a
 * card of the workspace's (else 400 / 404); its connection's Bot Framework token check (else 401);
 * the clicking user is mapped to a svc user by the email the connector gives for them; then the
 * step's rules, as for Slack. The answer replaces the card with its outcome.
 */

export type TeamsAnswer = { status: 200; body: Record<string, unknown> };

export async function handleTeamsCallback(deps: CoreDeps, workspaceId: string, req: { authorization: string | undefined; rawBody: string }): Promise<TeamsAnswer> {
  if (!req.authorization) throw new ApiError(401, 'unauthorized', 'a Teams call needs Authorization: Bearer <Bot Framework token>');
  const activity = parseActivity(req.rawBody);
  const flowJob = await deps.store.getJob(workspaceId, activity.ref.flowJobId);
  const run = flowJob?.kind === 'flow' ? await getFlowRun(deps, workspaceId, flowJob.id) : null;
  const message = findMessage(run, activity.ref.messageId);
  if (!flowJob || !message || message.platform !== 'teams' || message.target.kind !== 'step') throw notFound('chat approval card');
  const conn = await readTeamsConnection(deps, await runRights(deps, flowJob), message.connection);
  await assertBotFrameworkToken(deps, conn, req.authorization, activity.serviceUrl);
  const member = await callConnector(deps, conn, 'GET', `/v3/conversations/${encodeURIComponent(activity.conversationId)}/members/${encodeURIComponent(activity.userId)}`).catch((e: Error) => {
    throw new ApiError(403, 'unknown_user', `your Teams account could not be looked up (${e.message}), so it maps to no svc user`);
  });
  const email = typeof member.email === 'string' ? member.email : typeof member.userPrincipalName === 'string' ? member.userPrincipalName : null;
  if (!email) throw new ApiError(403, 'unknown_user', 'your Teams account shows no email, so it maps to no svc user');
  const user = await svcUserByEmail(deps, workspaceId, email, typeof member.name === 'string' ? member.name : email);
  if (message.decision) throw conflict(`this approval was already decided: ${message.decision.decision} by ${message.decision.by}`);
  const check = await checkStepDecider(deps, workspaceId, message, message.target, user);
  const outcome = activity.verb === 'reject' ? await rejectStep(deps, check, user, 'Teams') : await approveStep(deps, check, user, cardValues(check.form, activity.data));
  await settleMessage(deps, flowJob, message, outcome, { shown: true });
  // Universal Actions: an adaptive card in the invoke response replaces the card for everyone.
  return { status: 200, body: { statusCode: 200, type: 'application/vnd.microsoft.card.adaptive', value: decidedCard(message, outcome.text) } };
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
