import type { FlowRun } from './run-state.js';
import type { CoreDeps } from '../deps.js';

/**
 * Suspended flows whose approval timeout is due (spec 3: "flow suspended | timeout"). The local
 * shell polls this; waking such a flow lets the interpreter cancel it or go on with an error.
 */
export async function dueSuspendedFlows(deps: Pick<CoreDeps, 'store' | 'clock'>): Promise<{ workspaceId: string; flowJobId: string }[]> {
  const now = deps.clock.now().getTime();
  const due: { workspaceId: string; flowJobId: string }[] = [];
  for (const ws of await deps.store.listWorkspaces()) {
    for (const e of await deps.store.listEntities('flow_run', ws.id)) {
      const run = e.value as unknown as FlowRun;
      if (run.status === 'suspended' && run.step?.kind === 'suspend' && run.step.deadline !== null && Date.parse(run.step.deadline) <= now) {
        due.push({ workspaceId: ws.id, flowJobId: e.key });
      }
    }
  }
  return due;
}
