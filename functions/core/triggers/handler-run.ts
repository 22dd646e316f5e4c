import { resolveRunTarget, type Runnable } from '../jobs/run-target.js';
import { startRun } from '../runs/start-run.js';
import { authorRights, type Author } from './author.js';
import type { JobOrigin } from '../jobs/jobs.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';

/**
 * Handler runs: the script or flow a setting names for another run's outcome (a schedule's
 * on_failure and on_recovery, the workspace error handler), started as the setting's author under
 * an id derived from that run. The id is what lets a sweep repeat a start a stop may have
 * prevented: once the handler started, a run with that id exists and the start does nothing.
 */

/** What a handler runs, with the rights of the author it runs as. */
export interface HandlerRunnable {
  rights: Rights;
  runnable: Runnable;
}

/**
 * The handler at `path` as `author` may run it now, or why not (the words each caller logs or
 * answers): the author may have lost the right, or the path its script or flow, since saving it.
 * `only` narrows the path to a script or a flow (a schedule names which it runs).
 */
export async function resolveHandler(
  deps: Pick<CoreDeps, 'store'>,
  workspaceId: string,
  author: Author,
  what: string,
  path: string,
  only?: 'script' | 'flow',
): Promise<({ ok: true } & HandlerRunnable) | { ok: false; reason: string }> {
  const rights = await authorRights(deps, workspaceId, author, what);
  const target = await resolveRunTarget(deps.store, workspaceId, (p) => rights.can('jobs', 'run', p), { by: 'path', path, only });
  if (!target.ok) return { ok: false, reason: target.reason === 'forbidden' ? `${author.permissioned_as} may not run ${path}` : `there is no ${target.what}` };
  return { ok: true, rights, runnable: target.runnable };
}

/**
 * Starts the handler run `id` unless it exists; answers whether this call started it. `prepare`
 * is asked for what to run only when it does not: a handler that already started must not fail
 * for an author gone since, nor cost the reads its arguments take.
 */
export async function startHandlerRun(deps: CoreDeps, workspaceId: string, id: string, origin: JobOrigin, prepare: () => Promise<{ target: HandlerRunnable; args: Record<string, unknown> }>): Promise<boolean> {
  if (await deps.store.getJob(workspaceId, id)) return false;
  const { target, args } = await prepare();
  await startRun(deps, target.rights, target.runnable, args, id, origin);
  return true;
}
