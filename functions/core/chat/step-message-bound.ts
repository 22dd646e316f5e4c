import { ApiError } from '../common/errors.js';
import { updateEntity } from '../store/entities.js';
import type { ChatMessage } from '../flows/run-state.js';
import type { SuspendSettings } from '../flows/definition.js';
import type { CoreDeps } from '../deps.js';

/**
 * How many chat messages one approval step may have posted: each is one approval of its own (its
 * resume id), so a step that needs N approvals may need N messages, and a post that failed may be
 * tried again; beyond that, more messages only make the workspace's bot louder. The bound is
 * counted on the run's record of messages, so it also bounds how much a step adds to that record.
 */
export const MIN_MESSAGES_PER_STEP = 10;

export function stepMessageLimit(settings: Pick<SuspendSettings, 'required_events'>): number {
  return Math.max(MIN_MESSAGES_PER_STEP, 2 * settings.required_events);
}

/**
 * Records `message` on the flow run (before it is posted, as recordMessage does), unless the step
 * it asks for has `limit` messages already: then 409 and nothing is recorded or posted. Counted in
 * the same conditional write that adds the message, so concurrent requests cannot pass it together.
 */
export async function recordStepMessage(deps: Pick<CoreDeps, 'store' | 'clock'>, workspaceId: string, flowJobId: string, message: ChatMessage, limit: number): Promise<void> {
  const target = message.target;
  if (target.kind !== 'step') throw new Error('recordStepMessage records a message of an approval step');
  await updateEntity(deps.store, deps.clock, 'flow_run', workspaceId, flowJobId, `flow run ${flowJobId}`, (run) => {
    const sent = (run.chat ?? []).filter((m) => m.target.kind === 'step' && m.target.step_job === target.step_job).length;
    if (sent >= limit) {
      throw new ApiError(
        409,
        'too_many_chat_messages',
        `approval step ${target.step_job} has asked a chat ${sent} times, the most a step may (${MIN_MESSAGES_PER_STEP}, or twice the approvals it requires when that is more): it is decided through the messages already posted, its resume URLs or its approval page`,
        { limit },
      );
    }
    return { ...run, chat: [...(run.chat ?? []), message] };
  });
}
