import { z } from 'zod';
import { badRequest } from '../common/errors.js';
import { deleteEntity, getEntityValue, tryCreateEntity, updateEntity } from '../store/entities.js';
import { assertItemPath } from '../common/paths.js';
import { parseBody } from '../common/validation.js';
import { resolveRunTarget } from '../jobs/run-target.js';
import { startRun } from '../runs/start-run.js';
import { authorOf, authorRights } from '../triggers/author.js';
import { errorText, log } from '../common/logger.js';
import type { ErrorHandlerSetting } from '../documents/entity-values.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/**
 * The workspace error handler (the modelled service's `edit_error_handler`): a script or flow that
 * runs for every failed top-level job and flow of the workspace, with what failed. It runs as the
 * admin who set it. Its own failures do not call it again (no loop), and canceled jobs do not call it.
 */

const KEY = 'error_handler';
const WHAT = 'the workspace error handler';

export const editErrorHandlerBody = z.strictObject({
  /** A script or flow path (`script/` or `flow/` before it, as the modelled service writes it, is allowed); null removes the handler. */
  path: z.string().min(1).max(1000).nullable(),
  /** Passed to the handler beside what failed. */
  extra_args: z.record(z.string(), z.unknown()).default({}),
});

export async function getErrorHandler(deps: Pick<CoreDeps, 'store'>, workspaceId: string): Promise<ErrorHandlerSetting | null> {
  return getEntityValue(deps.store, 'error_handler', workspaceId, KEY);
}

/** Sets or removes the workspace's error handler; workspace admins only, and only a handler they may run. */
export async function setErrorHandler(deps: Pick<CoreDeps, 'store' | 'clock'>, rights: Rights, body: unknown): Promise<{ path: string | null; extra_args: Record<string, unknown> }> {
  rights.check('workspaces', 'write');
  const input = parseBody(editErrorHandlerBody, body);
  const ws = rights.workspaceId;
  if (input.path === null) {
    await deleteEntity(deps.store, 'error_handler', ws, KEY, WHAT).catch(() => undefined);
    return { path: null, extra_args: {} };
  }
  const path = input.path.replace(/^(script|flow)\//, '');
  assertItemPath(path, 'path');
  const target = await resolveRunTarget(deps.store, ws, (p) => rights.can('jobs', 'run', p), { by: 'path', path });
  if (!target.ok) throw badRequest('invalid_request', target.reason === 'forbidden' ? `path: you may not run ${path}` : `path: there is no script or flow ${path}`, { field: 'path' });
  const setting: ErrorHandlerSetting = { path, extra_args: input.extra_args, ...authorOf(rights) };
  if (!(await tryCreateEntity(deps.store, deps.clock, 'error_handler', ws, KEY, setting))) await updateEntity(deps.store, deps.clock, 'error_handler', ws, KEY, WHAT, () => setting);
  return { path, extra_args: input.extra_args };
}

/**
 * A top-level job or flow of the workspace failed: its error handler runs with `workspace_id`,
 * `job_id`, `path`, `is_flow`, `started_at`, `email` (who started it), `schedule_path` and `error`,
 * plus the handler's `extra_args`. Never throws: a handler that cannot start is logged, and the
 * job's own outcome stands.
 */
export async function onWorkspaceJobFailed(deps: CoreDeps, job: Job, error: unknown): Promise<void> {
  if (job.parent_job) return;
  try {
    const handler = await getErrorHandler(deps, job.workspace_id);
    if (!handler || job.script_path === handler.path) return;
    const rights = await authorRights(deps, job.workspace_id, handler, WHAT);
    const target = await resolveRunTarget(deps.store, job.workspace_id, (p) => rights.can('jobs', 'run', p), { by: 'path', path: handler.path });
    if (!target.ok) throw new Error(target.reason === 'forbidden' ? `${handler.permissioned_as} may not run ${handler.path}` : `there is no ${target.what}`);
    const user = await deps.store.getUser(job.created_by);
    const args = {
      ...handler.extra_args,
      workspace_id: job.workspace_id,
      job_id: job.id,
      path: job.script_path,
      is_flow: job.kind === 'flow',
      started_at: job.started_at,
      email: user?.email ?? job.created_by,
      schedule_path: job.schedule_path ?? null,
      error,
    };
    await startRun(deps, rights, target.runnable, args, undefined, { trigger: 'error_handler' });
  } catch (e) {
    log.error('workspace error handler did not start', { workspace: job.workspace_id, job_id: job.id, error: errorText(e) });
  }
}
