import { changeMessage, showOutcome } from './chat-messages.js';
import { getFlowRun, type ChatMessage } from '../flows/run-state.js';
import { findChatConnection, type TeamsConnection } from './chat-settings.js';
import { callConnector } from './teams-api.js';
import { cardActivity, decidedCard } from './teams-cards.js';
import type { ChatOutcome } from './step-decision.js';
import type { CoreDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/**
 * Records a decision on the message it came from and shows it there; once the approval is
 * closed, every other message asking for it shows the outcome too (their buttons would decide
 * nothing any more), in whichever chat app it was posted. `shown`: the message the chat app
 * replaces itself (a Teams card answered in the invoke response), which needs no update call.
 */
export async function settleMessage(deps: CoreDeps, flowJob: Job, message: ChatMessage, outcome: ChatOutcome, opts: { shown?: boolean } = {}): Promise<void> {
  await changeMessage(deps, flowJob.workspace_id, flowJob.id, message.id, (m) => ({ ...m, decision: outcome.decision }));
  if (!opts.shown) await showOn(deps, flowJob, message, outcome.text);
  if (!outcome.closed) return;
  const run = await getFlowRun(deps, flowJob.workspace_id, flowJob.id);
  const others = (run?.chat ?? []).filter((m) => m.id !== message.id && !m.decision && sameTarget(m.target, message.target));
  for (const other of others) await showOn(deps, flowJob, other, `${outcome.text} (in another message)`);
}

async function showOn(deps: CoreDeps, flowJob: Job, message: ChatMessage, text: string): Promise<void> {
  // A connection removed (or replaced by another platform's) since the message was posted: nothing to update.
  const conn = await findChatConnection(deps, flowJob.workspace_id, message.connection).catch(() => null);
  if (conn?.platform === 'slack' && message.platform === 'slack') await showOutcome(deps, conn, flowJob.workspace_id, flowJob.id, message, text);
  if (conn?.platform === 'teams' && message.platform === 'teams') await replaceTeamsCard(deps, conn, flowJob.workspace_id, flowJob.id, message, text);
}

/** Replaces a posted Teams card by its outcome (an update of the activity); a failure is recorded. */
async function replaceTeamsCard(deps: CoreDeps, conn: TeamsConnection, workspaceId: string, flowJobId: string, message: ChatMessage, text: string): Promise<void> {
  if (!message.ts) return;
  const at = deps.clock.now().toISOString();
  const path = `/v3/conversations/${encodeURIComponent(message.channel)}/activities/${encodeURIComponent(message.ts)}`;
  const error = await callConnector(deps, conn, 'PUT', path, { ...cardActivity(decidedCard(message, text)), id: message.ts }).then(
    () => null,
    (e: Error) => e.message,
  );
  await changeMessage(deps, workspaceId, flowJobId, message.id, (m) => ({ ...m, deliveries: [...m.deliveries, { method: 'activities.update', ok: error === null, at, ...(error ? { error: error.slice(0, 300) } : {}) }] }));
}

function sameTarget(a: ChatMessage['target'], b: ChatMessage['target']): boolean {
  if (a.kind === 'step' && b.kind === 'step') return a.step_job === b.step_job;
  return a.kind === 'gate' && b.kind === 'gate' && a.module === b.module;
}
