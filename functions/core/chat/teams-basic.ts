import { randomInt } from 'node:crypto';
import { z } from 'zod';
import { badRequest } from '../common/errors.js';
import { parseBody } from '../common/validation.js';
import { resumeUrls, type ResumeUrls } from '../approvals/resume.js';
import { stepApprovalMessage, waitingApprovalStep } from './chat-approval-request.js';
import { changeMessage } from './chat-messages.js';
import { recordStepMessage, stepMessageLimit } from './step-message-bound.js';
import { APPROVE_VERB, REF, REJECT_VERB } from './teams-cards.js';
import { callConnector, TeamsApiError } from './teams-api.js';
import { chatConnectionsOf, type TeamsConnection } from './chat-settings.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';

/**
 * The basic variant of spec 4.9 (send a message to a conversation): from an approval step, post
 * `text` and the caller's Adaptive Card to a Teams conversation, with a button opening the step's
 * approval page (a fresh resume URL). No callback: the page decides, with its own rules. The
 * connection is the workspace's one `teams` chat connection. Who may send it, and how many times a
 * step may, is as for the interactive request (chat-requester.ts, step-message-bound.ts); the
 * message is recorded on the run like the others.
 */

export const body = z.strictObject({
  conversation_id: z.string().min(1).max(500),
  text: z.string().max(3000).default(''),
  card_block: z.record(z.string(), z.unknown()).nullish(),
});

export interface ConversationMessageSent extends ResumeUrls {
  posted: boolean;
  ts: string | null;
  error: string | null;
}

export async function sendConversationMessage(deps: Pick<CoreDeps, 'store' | 'clock' | 'config' | 'cipher' | 'outbound'>, rights: Rights, stepJobId: string, input: unknown): Promise<ConversationMessageSent> {
  const { run, settings } = await waitingApprovalStep(deps, rights, stepJobId);
  const req = parseBody(body, input);
  if (Buffer.byteLength(JSON.stringify(req.card_block ?? {})) > 24 * 1024) throw badRequest('invalid_request', 'card_block: larger than 24 KiB', { field: 'card_block' });
  refuseServiceActions(req.card_block, 'card_block');
  const conn = await onlyTeamsConnection(deps, rights.workspaceId);
  const resumeId = randomInt(2 ** 32);
  // Recorded as the step's other messages are: counted against its bound, shown on the run with how the post went.
  const message = stepApprovalMessage('teams', conn.name, req.conversation_id, stepJobId, resumeId, { message: req.text });
  await recordStepMessage(deps, rights.workspaceId, run.flow_job, message, stepMessageLimit(settings));
  const urls = resumeUrls(deps, { workspaceId: rights.workspaceId, stepJobId, resumeId, approver: null, flowLevel: false });
  const link = { type: 'Action.OpenUrl', title: 'Open the approval page', url: urls.approvalPage };
  const card = req.card_block
    ? { ...req.card_block, actions: [...(Array.isArray(req.card_block.actions) ? req.card_block.actions : []), link] }
    : { type: 'AdaptiveCard', $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', version: '1.4', body: [], actions: [link] };
  const activity = { type: 'message', ...(req.text ? { text: req.text } : {}), attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', content: card }] };
  const at = deps.clock.now().toISOString();
  let ts: string | null = null;
  let error: string | null = null;
  try {
    const answer = await callConnector(deps, conn, 'POST', `/v3/conversations/${encodeURIComponent(req.conversation_id)}/activities`, activity);
    ts = typeof answer.id === 'string' ? answer.id : null;
  } catch (e) {
    error = e instanceof TeamsApiError ? e.message : String((e as Error).message ?? e);
  }
  const delivery = { method: 'activities.post', ok: error === null, at, ...(error ? { error: error.slice(0, 300) } : {}) };
  await changeMessage(deps, rights.workspaceId, run.flow_job, message.id, (m) => ({ ...m, ts, deliveries: [...m.deliveries, delivery] }));
  return { ...urls, posted: error === null, ts, error };
}

/**
 * The caller's card carries no action of the service's own: an `Action.Execute` with its verb and
 * a `svc_ref` would be taken by the bot's messaging endpoint as the Approve / Reject of whatever
 * approval that reference names (another step's, another run's), under a text the caller wrote.
 */
function refuseServiceActions(value: unknown, path: string): void {
  if (Array.isArray(value)) {
    value.forEach((v, i) => refuseServiceActions(v, `${path}.${i}`));
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, v] of Object.entries(value)) {
    if (key === REF || (key === 'verb' && (v === APPROVE_VERB || v === REJECT_VERB))) {
      throw badRequest('invalid_request', `${path}.${key}: a card sent to a conversation may not carry the service's own approval actions (${APPROVE_VERB}, ${REJECT_VERB}, ${REF}); its approval page link is added to it`, { field: 'card_block' });
    }
    refuseServiceActions(v, `${path}.${key}`);
  }
}

async function onlyTeamsConnection(deps: Pick<CoreDeps, 'store' | 'cipher'>, workspaceId: string): Promise<TeamsConnection> {
  const found = await chatConnectionsOf(deps, workspaceId, 'teams');
  if (found.length !== 1) throw badRequest('invalid_request', `the basic variant posts through the workspace's one teams chat connection; it has ${found.length}${found.length ? ` (${found.map((c) => c.name).join(', ')})` : ''}`);
  return found[0];
}
