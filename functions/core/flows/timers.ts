import { typed } from '../store/entities.js';
import { StoredDocumentError } from '../documents/parse.js';
import { gateWithPendingNotices } from '../approvals/gate-notices.js';
import type { FlowRunDocument } from './flow-documents.js';
import type { Entity } from '../../ports.js';
import type { CoreDeps } from '../deps.js';

/**
 * Suspended flows and ConsentGates with a timeout (spec 3: "flow suspended | timeout") and flows
 * waiting out a retry delay or a sleep, due now or, with
 * `includeFuture`, later too. The local shell wakes them on start, so timers survive a restart.
 */
export async function dueSuspendedFlows(deps: Pick<CoreDeps, 'store' | 'clock'>, opts: { includeFuture: boolean }): Promise<{ workspaceId: string; flowJobId: string }[]> {
  const now = deps.clock.now().getTime();
  return runsWhere(deps, (run) => {
    // A retry delay or a sleep (a `wait` step) is a timer too: a restart mid-sleep re-arms it.
    if (run.status === 'running' && run.step?.kind === 'wait') return opts.includeFuture || Date.parse(run.step.until) <= now;
    const waiting = (run.status === 'suspended' && run.step?.kind === 'suspend') || (run.status === 'awaiting_approval' && run.step?.kind === 'gate');
    if (!waiting || !run.step || !('deadline' in run.step) || run.step.deadline === null) return false;
    return opts.includeFuture || Date.parse(run.step.deadline) <= now;
  });
}

/**
 * Runs waiting at a ConsentGate whose notices were never all tried (the process died between
 * storing the gate and sending): waking one makes the interpreter send them (gate-notices.ts).
 * Only running flow jobs are looked at (an index on both shells), not every run ever stored, as
 * the AWS maintenance function asks this every time it runs.
 */
export async function runsWithPendingNotices(deps: Pick<CoreDeps, 'store'>): Promise<{ workspaceId: string; flowJobId: string }[]> {
  const found: { workspaceId: string; flowJobId: string }[] = [];
  for (const ws of await deps.store.listWorkspaces()) {
    for (const job of await deps.store.listJobs({ workspace_id: ws.id, status: 'running', kind: 'flow', limit: RUNNING_SCAN_LIMIT })) {
      if (job.kind !== 'flow') continue;
      const entity = await deps.store.getEntity('flow_run', ws.id, job.id);
      const run = entity && readableRun(entity);
      if (run && gateWithPendingNotices(run)) found.push({ workspaceId: ws.id, flowJobId: job.id });
    }
  }
  return found;
}

/** Running jobs looked at per workspace for unsent notices. */
const RUNNING_SCAN_LIMIT = 10_000;

async function runsWhere(deps: Pick<CoreDeps, 'store'>, wanted: (run: FlowRunDocument) => boolean): Promise<{ workspaceId: string; flowJobId: string }[]> {
  const found: { workspaceId: string; flowJobId: string }[] = [];
  for (const ws of await deps.store.listWorkspaces()) {
    for (const e of await deps.store.listEntities('flow_run', ws.id)) {
      const run = readableRun(e);
      if (run && wanted(run)) found.push({ workspaceId: ws.id, flowJobId: e.key });
    }
  }
  return found;
}

/**
 * One run that does not match its schema must not keep every other flow's timer from firing (this
 * runs when the local service starts): it is skipped here, and fails clearly when it is advanced.
 */
function readableRun(e: Entity): FlowRunDocument | null {
  try {
    return typed('flow_run', e).value;
  } catch (error) {
    if (error instanceof StoredDocumentError) return null;
    throw error;
  }
}
