import { ApiError } from '../common/errors.js';
import { personBlocker } from '../approvals/approval-rules.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';

/**
 * Who may ask a chat for an approval step's approvals (the chat routes' `request_approval` and
 * `send_message`): each call makes the workspace's bot post, as itself, text the caller chose with
 * buttons or a link that decide the step, and answers fresh resume URLs of the step. So reading the
 * step's job is not enough:
 *
 * - the step itself, with its own job token (`OV_TOKEN`), which is what the client libraries send
 *   from inside the step; a job's token never asks for another job, not even its flow's or an
 *   admin's other jobs (a flow job runs no code, so no token names it);
 * - a workspace admin acting as a person (login session or unscoped personal token): the one who
 *   connects the chat apps (chat-settings.ts) and could make any flow post through them, for
 *   instance to ask again after a post failed.
 *
 * Everyone else, the one who started the flow included, gets 403. This is decided from the
 * credential alone, before the job is looked up: an unknown job and one the caller may not use
 * answer alike.
 */
export async function assertMayAskChat(deps: Pick<CoreDeps, 'store'>, rights: Rights, stepJobId: string): Promise<void> {
  const principal = rights.principal;
  if (principal.via === 'job') {
    if (principal.jobId === stepJobId && rights.entersWorkspace()) return;
    throw new ApiError(403, 'forbidden', `a job's token asks a chat for approvals only for its own approval step: the token of job ${principal.jobId} may not ask for job ${stepJobId}`);
  }
  if (rights.can('workspaces', 'write') && !(await personBlocker(deps, principal, rights.workspaceId))) return;
  throw new ApiError(
    403,
    'forbidden',
    `only the approval step itself (the client libraries call this from inside the step, with its job token) or a workspace admin signed in as a person may ask a chat for approvals: ${principal.username} may not ask for job ${stepJobId}`,
  );
}
