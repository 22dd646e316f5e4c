import { ApiError } from '../errors.js';
import { jobPrincipal } from '../auth.js';
import { Rights } from '../permissions.js';
import type { CoreDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/**
 * The rights a run acts with (its creator's, narrowed by the scopes it was started with), as its
 * steps get them in OV_TOKEN. The service reads a run's chat connection with these when Slack
 * calls back or a gate posts, so a flow can use no connection its own steps could not read.
 */
export async function runRights(deps: Pick<CoreDeps, 'store'>, flowJob: Job): Promise<Rights> {
  const user = await deps.store.getUser(flowJob.created_by);
  if (!user) throw new ApiError(409, 'conflict', `the run's user ${flowJob.created_by} no longer exists`);
  return Rights.load(deps, jobPrincipal(user.username, user.is_admin, flowJob.workspace_id, flowJob.id, flowJob.created_scopes), flowJob.workspace_id);
}
