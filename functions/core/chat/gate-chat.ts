import { newShortId } from '../common/crypto.js';
import { getFlowRun, type ChatMessage } from '../flows/run-state.js';
import { postApprovalMessage, recordMessage } from './chat-messages.js';
import { findChatConnection } from './chat-settings.js';
import { postTeamsCard } from './teams-request.js';
import { gateCard } from './teams-cards.js';
import { buttonValue } from './slack-blocks.js';
import type { CoreDeps } from '../deps.js';

/**
 * A ConsentGate's `chat` notice (spec 2.7, 6.3): the gate's rendered message with Approve / Reject
 * in a Slack channel or a Teams channel (a card with a reason field), through the workspace chat
 * connection the gate names (chat-settings.ts). Each
 * try is one of gate-notices.ts's attempts; a message posted once is not posted again (a resend
 * after a crash finds it on the run).
 */

export interface GateChatNotice {
  workspaceId: string;
  flowJobId: string;
  moduleId: string;
  resource: string;
  channelId: string;
  text: string;
}

type Deps = Pick<CoreDeps, 'store' | 'clock' | 'cipher' | 'outbound'>;

/** Throws when the message could not be posted (the caller records it and tries again). */
export async function postGateMessage(deps: Deps, notice: GateChatNotice): Promise<void> {
  const conn = await findChatConnection(deps, notice.workspaceId, notice.resource);
  if (!conn) throw new Error(`workspace ${notice.workspaceId} has no chat connection ${notice.resource}`);
  const platform = conn.platform;
  const run = await getFlowRun(deps, notice.workspaceId, notice.flowJobId);
  const isThis = (m: ChatMessage) => m.target.kind === 'gate' && m.target.module === notice.moduleId && m.connection === notice.resource && m.requested_channel === notice.channelId;
  let message = run?.chat?.find(isThis);
  if (message?.ts) return;
  if (!message) {
    message = {
      id: newShortId(16),
      platform,
      connection: conn.name,
      channel: notice.channelId,
      requested_channel: notice.channelId,
      ts: null,
      target: { kind: 'gate', module: notice.moduleId },
      approver: null,
      text: notice.text,
      default_args: {},
      enums: {},
      deliveries: [],
    };
    await recordMessage(deps, notice.workspaceId, notice.flowJobId, message);
  }
  const posted =
    conn.platform === 'teams'
      ? await postTeamsCard(deps, conn, notice.workspaceId, notice.flowJobId, message, gateCard(message, buttonValue(notice.flowJobId, message.id)))
      : await postApprovalMessage(deps, conn, notice.workspaceId, notice.flowJobId, message);
  if (!posted.ts) throw new Error(posted.error ?? 'the chat app did not post the message');
}
