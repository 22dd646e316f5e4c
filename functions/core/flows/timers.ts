import { listEntityValues } from '../entities.js';
import type { CoreDeps } from '../deps.js';

/**
 * Suspended flows with an approval timeout (spec 3: "flow suspended | timeout"), due now or, with
 * `includeFuture`, later too. The local shell wakes them on start, so timers survive a restart.
 */
export async function dueSuspendedFlows(deps: Pick<CoreDeps, 'store' | 'clock'>, opts: { includeFuture: boolean }): Promise<{ workspaceId: string; flowJobId: string }[]> {
  const now = deps.clock.now().getTime();
  const due: { workspaceId: string; flowJobId: string }[] = [];
  for (const ws of await deps.store.listWorkspaces()) {
    for (const e of await listEntityValues(deps.store, 'flow_run', ws.id)) {
      const run = e.value;
      if (run.status !== 'suspended' || run.step?.kind !== 'suspend' || run.step.deadline === null) continue;
      if (opts.includeFuture || Date.parse(run.step.deadline) <= now) due.push({ workspaceId: ws.id, flowJobId: e.key });
    }
  }
  return due;
}
