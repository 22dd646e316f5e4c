import { randomInt } from 'node:crypto';
import { z } from 'zod';
import { badRequest } from '../common/errors.js';
import { parseBody } from '../common/validation.js';
import { resumeUrls, type ResumeUrls } from '../approvals/resume.js';
import { waitingApprovalStep } from './chat-approval-request.js';
import { callConnector, TeamsApiError } from './teams-api.js';
import { chatConnectionsOf, type TeamsConnection } from './chat-settings.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';

/**
 * The basic variant of spec 4.9 (send a message to a conversation): from an approval step, post
 * `text` and the caller's Adaptive Card to a Teams conversation, with a button opening the step's
 * approval page (a fresh resume URL). No callback: the page decides, with its own rules. The
 * connection is the workspace's one `teams` chat connection.
 */

export const body = z.object({
  conversation_id: z.string().min(1).max(500),
  text: z.string().max(3000).default(''),
  card_block: z.record(z.string(), z.unknown()).nullish(),
});

export interface ConversationMessageSent extends ResumeUrls {
  posted: boolean;
  ts: string | null;
  error: string | null;
}

export async function sendConversationMessage(deps: Pick<CoreDeps, 'store' | 'config' | 'cipher' | 'outbound'>, rights: Rights, stepJobId: string, input: unknown): Promise<ConversationMessageSent> {
  const req = parseBody(body, input);
  if (Buffer.byteLength(JSON.stringify(req.card_block ?? {})) > 24 * 1024) throw badRequest('invalid_request', 'card_block: larger than 24 KiB', { field: 'card_block' });
  await waitingApprovalStep(deps, rights, stepJobId);
  const conn = await onlyTeamsConnection(deps, rights.workspaceId);
  const urls = resumeUrls(deps, { workspaceId: rights.workspaceId, stepJobId, resumeId: randomInt(2 ** 32), approver: null, flowLevel: false });
  const link = { type: 'Action.OpenUrl', title: 'Open the approval page', url: urls.approvalPage };
  const card = req.card_block
    ? { ...req.card_block, actions: [...(Array.isArray(req.card_block.actions) ? req.card_block.actions : []), link] }
    : { type: 'AdaptiveCard', $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', version: '1.4', body: [], actions: [link] };
  const activity = { type: 'message', ...(req.text ? { text: req.text } : {}), attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', content: card }] };
  try {
    const answer = await callConnector(deps, conn, 'POST', `/v3/conversations/${encodeURIComponent(req.conversation_id)}/activities`, activity);
    return { ...urls, posted: true, ts: typeof answer.id === 'string' ? answer.id : null, error: null };
  } catch (e) {
    return { ...urls, posted: false, ts: null, error: e instanceof TeamsApiError ? e.message : String((e as Error).message ?? e) };
  }
}

async function onlyTeamsConnection(deps: Pick<CoreDeps, 'store' | 'cipher'>, workspaceId: string): Promise<TeamsConnection> {
  const found = await chatConnectionsOf(deps, workspaceId, 'teams');
  if (found.length !== 1) throw badRequest('invalid_request', `the basic variant posts through the workspace's one teams chat connection; it has ${found.length}${found.length ? ` (${found.map((c) => c.name).join(', ')})` : ''}`);
  return found[0];
}
