import { conflict } from '../common/errors.js';
import { cancelSignal, getJob, getVisibleJob, isFinished } from './jobs.js';
import { cancelFlowSteps } from '../flows/awaited-jobs.js';
import { leaveSlot } from './concurrency.js';
import type { Job } from '../../ports.js';
import type { CoreDeps } from '../deps.js';
import type { Rights } from '../identity/permissions.js';

/**
 * Cancelling a job on a user's request. Apart from jobs.ts because it reaches into flows (a
 * cancelled flow stops its steps), and the flow interpreter itself builds on jobs.ts.
 */
export async function cancelJob(deps: CoreDeps, rights: Rights, id: string, reason: string | undefined): Promise<Job> {
  const job = await getVisibleJob(deps, rights, id, 'cancel');
  const principal = rights.principal;
  const workspaceId = rights.workspaceId;
  if (isFinished(job.status)) throw conflict(`job ${id} already finished as ${job.status}`);
  const message = `canceled by ${principal.username}${reason ? `: ${reason}` : ''}`;
  const result = { error: { name: 'Canceled', message } };
  const won = await deps.store.completeJob(id, { status: 'canceled', result, logs: job.logs }, deps.clock.now().toISOString());
  if (!won) throw conflict(`job ${id} finished before it could be canceled`);
  deps.signals.notify(id, { status: 'canceled', result });
  deps.signals.notify(cancelSignal(id));
  await leaveSlot(deps, job);
  // A cancelled flow stops its steps; a cancelled step lets its flow fail or go on.
  if (job.kind === 'flow') {
    await cancelFlowSteps(deps, workspaceId, job.id);
    await deps.flows.wake(workspaceId, job.id);
  }
  if (job.parent_job) await deps.flows.wake(workspaceId, job.parent_job);
  return getJob(deps, workspaceId, id);
}
