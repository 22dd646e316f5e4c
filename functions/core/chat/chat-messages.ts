import { updateEntity } from '../store/entities.js';
import { callSlack, SlackApiError } from './slack-api.js';
import { approvalMessage, buttonValue, decidedMessage } from './slack-blocks.js';
import type { ChatDelivery, ChatMessage, FlowRun } from '../flows/run-state.js';
import type { SlackConnection } from './chat-settings.js';
import type { CoreDeps } from '../deps.js';

/**
 * The chat messages of a run, kept on its `flow_run` record (`chat`). A message is recorded before
 * it is posted, so a click that arrives at once finds it; each post and update attempt is recorded
 * with it, so a failed post is visible on the run and never silent. A failed post loses nothing:
 * the step's resume URLs and the approval page still decide it.
 */

type Deps = Pick<CoreDeps, 'store' | 'clock' | 'outbound'>;

export async function recordMessage(deps: Pick<CoreDeps, 'store' | 'clock'>, workspaceId: string, flowJobId: string, message: ChatMessage): Promise<void> {
  await updateEntity(deps.store, deps.clock, 'flow_run', workspaceId, flowJobId, `flow run ${flowJobId}`, (run) => ({ ...run, chat: [...(run.chat ?? []), message] }));
}

/** Applies `change` to the run's message `id` (when it is there). */
export async function changeMessage(deps: Pick<CoreDeps, 'store' | 'clock'>, workspaceId: string, flowJobId: string, id: string, change: (m: ChatMessage) => ChatMessage): Promise<void> {
  await updateEntity(deps.store, deps.clock, 'flow_run', workspaceId, flowJobId, `flow run ${flowJobId}`, (run) => ({ ...run, chat: (run.chat ?? []).map((m) => (m.id === id ? change(m) : m)) }));
}

export function findMessage(run: FlowRun | null, id: string): ChatMessage | null {
  return run?.chat?.find((m) => m.id === id) ?? null;
}

/**
 * Posts the message with its buttons (retried with backoff), and records the attempt and, on
 * success, Slack's `ts`. Never throws for Slack's failures: they come back as `error`.
 */
export async function postApprovalMessage(
  deps: Deps,
  conn: SlackConnection,
  workspaceId: string,
  flowJobId: string,
  message: ChatMessage,
  opts: { reject: boolean } = { reject: true },
): Promise<{ ts: string | null; error: string | null }> {
  const { delivery, answer, error } = await attempt(deps, 'chat.postMessage', () =>
    callSlack(deps, conn, 'chat.postMessage', { channel: message.channel, ...approvalMessage(message.text, buttonValue(flowJobId, message.id), opts) }),
  );
  const ts = typeof answer?.ts === 'string' ? answer.ts : null;
  // Slack may answer with the channel's id where a name was given; chat.update needs the id.
  const channel = typeof answer?.channel === 'string' ? answer.channel : message.channel;
  await changeMessage(deps, workspaceId, flowJobId, message.id, (m) => ({ ...m, ts, channel, deliveries: [...m.deliveries, delivery] }));
  return { ts, error };
}

/** Replaces the message's buttons with its outcome; a failure is recorded, never thrown. */
export async function showOutcome(deps: Deps, conn: SlackConnection, workspaceId: string, flowJobId: string, message: ChatMessage, outcome: string): Promise<void> {
  if (!message.ts) return;
  const { delivery } = await attempt(deps, 'chat.update', () => callSlack(deps, conn, 'chat.update', { channel: message.channel, ts: message.ts, ...decidedMessage(message, outcome) }));
  await changeMessage(deps, workspaceId, flowJobId, message.id, (m) => ({ ...m, deliveries: [...m.deliveries, delivery] }));
}

async function attempt(deps: Pick<CoreDeps, 'clock'>, method: string, call: () => Promise<Record<string, unknown>>): Promise<{ delivery: ChatDelivery; answer: Record<string, unknown> | null; error: string | null }> {
  const at = deps.clock.now().toISOString();
  try {
    const answer = await call();
    return { delivery: { method, ok: true, at }, answer, error: null };
  } catch (e) {
    const error = e instanceof SlackApiError ? e.message : `Slack ${method} failed: ${(e as Error).message ?? e}`;
    return { delivery: { method, ok: false, at, error: error.slice(0, 300) }, answer: null, error };
  }
}
