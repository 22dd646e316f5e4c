import { z } from 'zod';
import { badRequest } from '../common/errors.js';
import { deleteEntity, getEntityValue, readEntity, tryCreateEntity, tryReplaceEntity, updateEntity } from '../store/entities.js';
import { assertItemPath } from '../common/paths.js';
import { parseBody } from '../common/validation.js';
import { resolveRunTarget } from '../jobs/run-target.js';
import { authorOf } from '../triggers/author.js';
import { resolveHandler, startHandlerRun, type HandlerRunnable } from '../triggers/handler-run.js';
import { errorText, log } from '../common/logger.js';
import { derivedUuid } from '../common/crypto.js';
import { errorOf } from '../jobs/jobs.js';
import { findReference } from './bindings.js';
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
  // The sweep covers the runs that fail from now on (settleErrorHandlers).
  const setting: ErrorHandlerSetting = { path, extra_args: input.extra_args, ...authorOf(rights), sweep_from: deps.clock.now().toISOString() };
  if (!(await tryCreateEntity(deps.store, deps.clock, 'error_handler', ws, KEY, setting))) await updateEntity(deps.store, deps.clock, 'error_handler', ws, KEY, WHAT, () => setting);
  return { path, extra_args: input.extra_args };
}

/** How long a failed run may wait for its handler's own start before the sweep starts it. */
export const ERROR_HANDLER_GRACE_MS = 30_000;
/** The sweep looks at the runs that failed this recently (it runs every few seconds locally, every few minutes on AWS). */
const SWEEP_WINDOW_MS = 3600_000;
/**
 * Failed runs of each kind (scripts, flows) the sweep reads in one pass per workspace, newest
 * first among those created before the grace: the runs failing within it, which it leaves, do not
 * push older ones out of its reach. Flow steps are not read: as many of them fail as their flows'
 * steps, and they have no handler.
 */
const SWEEP_BATCH = 200;

/**
 * The id of the handler run a failed run calls for: the same each time, so a start repeated after
 * a stop (by the sweep) finds the run it started.
 */
export function errorHandlerJobId(workspaceId: string, jobId: string): string {
  return derivedUuid('error_handler', workspaceId, jobId);
}

/**
 * A top-level job or flow of the workspace failed: its error handler runs with `workspace_id`,
 * `job_id`, `path`, `is_flow`, `started_at`, `email` (who started it), `schedule_path` and `error`,
 * plus the handler's `extra_args`, under `errorHandlerJobId`. Never throws: a handler that cannot
 * start is logged, and the job's own outcome stands. A handler run a stop prevented (the failure was
 * stored, the handler not started) is started by `settleErrorHandlers`.
 */
export async function onWorkspaceJobFailed(deps: CoreDeps, job: Job, error: unknown): Promise<void> {
  if (job.parent_job) return;
  try {
    const handler = await getErrorHandler(deps, job.workspace_id);
    if (!handler || job.script_path === handler.path) return;
    const runnable = await resolveHandler(deps, job.workspace_id, handler, WHAT, handler.path);
    if (!runnable.ok) throw new Error(runnable.reason);
    await startHandler(deps, handler, runnable, job, error);
  } catch (e) {
    log.error('workspace error handler did not start', { workspace: job.workspace_id, job_id: job.id, error: errorText(e) });
  }
}

/**
 * The sweep (each shell runs it from time to time): in each workspace with an error handler, the
 * top-level runs that failed in the last hour, more than ERROR_HANDLER_GRACE_MS ago, and since the
 * handler was set, get their handler run if they have none. Returns how many it started. A handler
 * that cannot run (gone, forbidden) was logged when the run failed; the sweep passes over it quietly.
 */
export async function settleErrorHandlers(deps: CoreDeps, now: Date): Promise<number> {
  let started = 0;
  for (const ws of await deps.store.listWorkspaces()) {
    try {
      const stored = await readEntity(deps.store, 'error_handler', ws.id, KEY);
      if (!stored) continue;
      const handler = stored.value;
      if (!handler.sweep_from) {
        // Set before the sweep existed: the failures until now were handled without a known id.
        await tryReplaceEntity(deps.store, deps.clock, stored, { ...handler, sweep_from: now.toISOString() });
        continue;
      }
      const from = Math.max(Date.parse(handler.sweep_from), now.getTime() - SWEEP_WINDOW_MS);
      const until = now.getTime() - ERROR_HANDLER_GRACE_MS;
      // A run that completed by `until` was created by then (created_before is exclusive).
      const createdBefore = new Date(until + 1).toISOString();
      const kinds = await Promise.all(
        (['script', 'flow'] as const).map((kind) => deps.store.queryJobs({ workspace_id: ws.id, status: 'failed', kind, created_before: createdBefore, limit: SWEEP_BATCH })),
      );
      const failed = kinds.flat().filter((job) => {
        const at = job.completed_at ? Date.parse(job.completed_at) : NaN;
        return !job.parent_job && job.script_path !== handler.path && at >= from && at <= until;
      });
      if (failed.length === 0) continue;
      // Once per workspace: every failed run of the pass starts the same handler as the same admin.
      const runnable = await resolveHandler(deps, ws.id, handler, WHAT, handler.path).catch(() => null);
      if (!runnable?.ok) continue;
      for (const job of failed) if (await startHandler(deps, handler, runnable, job, errorOf(job.result))) started += 1;
    } catch (e) {
      log.error('workspace error handlers not settled', { workspace: ws.id, error: errorText(e) });
    }
  }
  return started;
}

/**
 * The failed run's error, unless it holds a `$var:`/`$res:` reference: whoever wrote the failed
 * run (any developer) chose it, and the handler runs as the admin who set it, whose rights would
 * resolve it (as its argument, or as a step's input in a handler flow). Such an error is replaced
 * by one that says where the reference was.
 */
function withoutReferences(error: unknown): unknown {
  const at = findReference({ error });
  if (at === null) return error;
  return {
    name: 'ReferenceLeftOut',
    message: `the failed run's error held a $var: or $res: reference (at ${at}), left out: the error handler runs as the admin who set it and would have read it with their rights`,
  };
}

/** Starts the handler run of a failed run under its id, unless it exists (it started). */
async function startHandler(deps: CoreDeps, handler: ErrorHandlerSetting, target: HandlerRunnable, job: Job, error: unknown): Promise<boolean> {
  return startHandlerRun(deps, job.workspace_id, errorHandlerJobId(job.workspace_id, job.id), { trigger: 'error_handler' }, async () => {
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
      error: withoutReferences(error),
    };
    return { target, args };
  });
}
