import type { CoreDeps } from '../deps.js';
import type { Rights } from '../identity/permissions.js';
import { getVisibleJob, jobView } from '../jobs/jobs.js';
import { getFlowRun, withFlowStatus } from './run-state.js';
import type { Assignable } from '../views/same.js';
import type { JobWithFlowStatus } from '../views/job-view.js';

/** At most this many sub-flow runs are read for one page refresh: a long loop shows its first ones. */
const MOST = 200;

export type SubflowRun = ReturnType<typeof withFlowStatus<ReturnType<typeof jobView>>>;

// The console's run page reads a flow's loop and branch runs as it reads a job (checked by the
// compiler here, not in views/job-view.ts, which jobs.ts imports: that would close a cycle).
const subflowRunAgrees: Assignable<SubflowRun, JobWithFlowStatus> = true;
void subflowRunAgrees;

/**
 * The runs a flow's loops and branches started (each iteration or branch is a flow run of its
 * own), nested ones too, as the API shows a job: the run page colours the steps inside loops and
 * branches from their statuses (not their arguments). Only those that exist: a sequential loop's
 * later iterations are listed in the run before they start, and are left out until they do.
 */
export async function subflowRuns(deps: CoreDeps, rights: Rights, flowJobId: string): Promise<SubflowRun[]> {
  const root = await getVisibleJob(deps, rights, flowJobId);
  const out: SubflowRun[] = [];
  const queue = [root.id];
  while (queue.length > 0 && out.length < MOST) {
    const run = await getFlowRun(deps, root.workspace_id, queue.shift()!);
    for (const id of Object.values(run?.child_jobs ?? {}).flat()) {
      if (out.length >= MOST) break;
      const child = await deps.store.getJob(root.workspace_id, id);
      if (!child) continue;
      const childRun = await getFlowRun(deps, root.workspace_id, id);
      // Without arguments: an iteration's are the whole flow's input again (the list it loops over,
      // say), so 200 iterations would carry it 200 times on every refresh. Its own page shows them.
      out.push(withFlowStatus({ ...jobView(child), args: null }, childRun));
      if (childRun?.child_jobs) queue.push(id);
    }
  }
  return out;
}
