import { randomInt } from 'node:crypto';
import { z } from 'zod';
import { badRequest } from '../common/errors.js';
import { parseBody } from '../common/validation.js';
import { changeMessage } from './chat-messages.js';
import { recordStepMessage, stepMessageLimit } from './step-message-bound.js';
import { approvalMessageFields, approvalRequested, stepApprovalMessage, waitingApprovalStep, type ChatApprovalRequested } from './chat-approval-request.js';
import { buttonValue } from './slack-blocks.js';
import { approvalCard, cardActivity } from './teams-cards.js';
import { callConnector, channelIdByName, TeamsApiError } from './teams-api.js';
import { chatConnectionsOf, type TeamsConnection } from './chat-settings.js';
import type { ChatMessage } from '../flows/run-state.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';

/**
 * What requestInteractiveCollabApproval calls (spec 4.9, the second chat app): post an Adaptive
 * Card with the step's form and Approve / Reject to a Teams channel, found by team and channel
 * name. The team names the connection: the workspace's `teams` chat connection (chat-settings.ts)
 * whose `team_name` is `teamName` (case aside); its `team_id` is the team the bot lists channels of.
 */

export const requestBody = z.strictObject({
  team_name: z.string().min(1).max(200),
  channel_name: z.string().min(1).max(200),
  ...approvalMessageFields,
});

type Deps = Pick<CoreDeps, 'store' | 'clock' | 'config' | 'cipher' | 'outbound'>;

export async function requestTeamsApproval(deps: Deps, rights: Rights, stepJobId: string, body: unknown): Promise<ChatApprovalRequested> {
  const { run, settings } = await waitingApprovalStep(deps, rights, stepJobId);
  const input = parseBody(requestBody, body);
  const conn = await teamConnection(deps, rights.workspaceId, input.team_name);
  const resumeId = randomInt(2 ** 32);
  const message = stepApprovalMessage('teams', conn.name, input.channel_name, stepJobId, resumeId, input);
  await recordStepMessage(deps, rights.workspaceId, run.flow_job, message, stepMessageLimit(settings));
  const card = approvalCard(message, buttonValue(run.flow_job, message.id), settings.resume_form?.schema ?? null, { reject: !settings.hide_cancel });
  const posted = await postTeamsCard(deps, conn, rights.workspaceId, run.flow_job, message, card);
  return approvalRequested(deps, rights, stepJobId, resumeId, message, posted);
}

async function teamConnection(deps: Deps, workspaceId: string, teamName: string): Promise<TeamsConnection> {
  const wanted = teamName.toLowerCase();
  const found = (await chatConnectionsOf(deps, workspaceId, 'teams')).find((c) => c.teamName.toLowerCase() === wanted);
  if (!found) throw badRequest('invalid_request', `team_name: no teams chat connection of workspace ${workspaceId} has team_name ${teamName}`, { field: 'team_name' });
  return found;
}

/**
 * Posts `card` to the message's channel (a channel id `19:...`, or a name of the connection's team),
 * and records the attempt and, on success, the channel id and activity id. Never throws for the
 * connector's failures: they come back as `error`.
 */
export async function postTeamsCard(deps: Pick<CoreDeps, 'store' | 'clock' | 'outbound'>, conn: TeamsConnection, workspaceId: string, flowJobId: string, message: ChatMessage, card: Record<string, unknown>): Promise<{ channel: string; ts: string | null; error: string | null }> {
  const at = deps.clock.now().toISOString();
  let posted: { channel: string; id: string } | null = null;
  let error: string | null = null;
  try {
    const wanted = message.requested_channel ?? message.channel;
    const channel = wanted.startsWith('19:') ? wanted : await channelIdByName(deps, conn, wanted);
    if (!channel) throw new TeamsApiError('channel lookup', `team ${conn.teamName} has no channel ${wanted}`, false);
    const answer = await callConnector(deps, conn, 'POST', `/v3/conversations/${encodeURIComponent(channel)}/activities`, cardActivity(card));
    if (typeof answer.id !== 'string') throw new TeamsApiError('post', 'the connector answered without an activity id', false);
    posted = { channel, id: answer.id };
  } catch (e) {
    error = e instanceof TeamsApiError ? e.message : `Teams post failed: ${(e as Error).message ?? e}`;
  }
  const delivery = { method: 'activities.post', ok: posted !== null, at, ...(error ? { error: error.slice(0, 300) } : {}) };
  await changeMessage(deps, workspaceId, flowJobId, message.id, (m) => ({ ...m, channel: posted?.channel ?? m.channel, ts: posted?.id ?? null, deliveries: [...m.deliveries, delivery] }));
  return { channel: posted?.channel ?? message.channel, ts: posted?.id ?? null, error };
}
