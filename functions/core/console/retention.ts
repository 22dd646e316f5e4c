import { getEntityValue, tryCreateEntity, updateEntity } from '../store/entities.js';
import { retentionInput, type RetentionSetting } from '../documents/entity-values.js';
import { isFinished } from '../jobs/jobs.js';
import { scrubJobPayloads } from '../jobs/scrub.js';
import { parseBody } from '../common/validation.js';
import type { CoreDeps } from '../deps.js';
import type { Rights } from '../identity/permissions.js';
import type { JobPosition, JobQuery } from '../../ports.js';

/**
 * History that stays bounded: a workspace may keep finished jobs' arguments, logs and results for
 * `max_age_days` and/or for its newest `max_count` finished jobs; the others are scrubbed (jobs/scrub.ts: the job stays listed, its payloads and a flow's run go).
 * The pruner works in small chunks, yielding between them, so the API is never held up; the local
 * shell runs it on a timer, the AWS shell in the scheduled maintenance Lambda.
 */

const KEY = 'retention';
const WHAT = 'the workspace retention setting';
const FINISHED = ['success', 'failed', 'canceled'] as const;

/** `max_count` is shown only when set, so a client that knows only `max_age_days` reads what it did. */
export type RetentionView = { max_age_days: number | null; max_count?: number };

function view(setting: RetentionSetting | null | undefined): RetentionView {
  return { max_age_days: setting?.max_age_days ?? null, ...(setting?.max_count ? { max_count: setting.max_count } : {}) };
}

export async function getRetention(deps: Pick<CoreDeps, 'store'>, rights: Rights): Promise<RetentionView> {
  rights.check('workspaces', 'read');
  return view(await getEntityValue(deps.store, 'retention', rights.workspaceId, KEY));
}

/** Workspace admins only; a field left out keeps its value, `null` lifts that bound. */
export async function setRetention(deps: Pick<CoreDeps, 'store' | 'clock'>, rights: Rights, body: unknown): Promise<RetentionView> {
  rights.check('workspaces', 'write');
  const input = parseBody(retentionInput, body);
  if (await tryCreateEntity(deps.store, deps.clock, 'retention', rights.workspaceId, KEY, input)) return view(input);
  // A walk under way keeps its place.
  const updated = await updateEntity(deps.store, deps.clock, 'retention', rights.workspaceId, KEY, WHAT, (old) => ({ ...old, ...input }));
  return view(updated.value);
}

/**
 * Where pruning by count starts: the position of the workspace's `maxCount`-th newest finished
 * job (every finished job older than it is beyond the count), or null when it has no more than
 * that. Read newest first in chunks, yielding between them like the pruning itself.
 */
async function countBoundary(deps: Pick<CoreDeps, 'store'>, workspaceId: string, maxCount: number, chunk: number): Promise<JobPosition | null> {
  let seen = 0;
  let after: JobPosition | undefined;
  for (;;) {
    const page = await deps.store.queryJobs({ workspace_id: workspaceId, after, limit: chunk });
    for (const job of page) {
      if (isFinished(job.status) && ++seen === maxCount) return { created_at: job.created_at, id: job.id };
    }
    if (page.length < chunk) return null;
    const last = page[page.length - 1];
    after = { created_at: last.created_at, id: last.id };
    await new Promise<void>((resolve) => setTimeout(resolve, 0));
  }
}

/** The jobs to scrub lie below the newer of the two bounds: the age cutoff, or the count boundary. */
function pruneBound(ageCutoff: string | null, countAt: JobPosition | null): Pick<JobQuery, 'created_before' | 'after'> | null {
  if (countAt && (!ageCutoff || countAt.created_at >= ageCutoff)) return { after: countAt };
  return ageCutoff ? { created_before: ageCutoff } : null;
}

export interface PruneOptions {
  /** Jobs read and scrubbed per step. */
  chunk: number;
  /** At most this many scrubbed per workspace and pass; the next pass goes on. */
  maxPerPass: number;
}

export const DEFAULT_PRUNE: PruneOptions = { chunk: 100, maxPerPass: 10_000 };

/**
 * One pass over every workspace with a retention setting. For each finished status it walks newest
 * first from the cutoff down. A walk from the top stops at a page already scrubbed entirely: what
 * lies below was done by an earlier, completed walk (jobs finish roughly in the order they start).
 * A walk cut short by the budget stores where it was, and the next pass goes on from there.
 */
export async function pruneFinishedJobs(deps: Pick<CoreDeps, 'store' | 'clock'>, opts: PruneOptions = DEFAULT_PRUNE): Promise<{ scrubbed: number }> {
  let scrubbed = 0;
  for (const ws of await deps.store.listWorkspaces()) {
    const setting = await getEntityValue(deps.store, 'retention', ws.id, KEY);
    if (!setting?.max_age_days && !setting?.max_count) continue;
    const cutoff = setting.max_age_days ? new Date(deps.clock.now().getTime() - setting.max_age_days * 86_400_000).toISOString() : null;
    const bound = pruneBound(cutoff, setting.max_count ? await countBoundary(deps, ws.id, setting.max_count, opts.chunk) : null);
    if (!bound) continue;
    let budget = opts.maxPerPass;
    const resume: NonNullable<RetentionSetting['resume']> = {};
    for (const status of FINISHED) {
      const resumed = setting.resume?.[status];
      let after: JobPosition | undefined = resumed;
      for (;;) {
        if (budget === 0) {
          if (after) resume[status] = after;
          break;
        }
        const limit = Math.min(opts.chunk, budget);
        // A walk resumed goes on below where it stopped, which is below the bound.
        const page = await deps.store.queryJobs({ workspace_id: ws.id, status, ...bound, ...(after ? { after } : {}), limit });
        const fresh = page.filter((j) => !j.deleted);
        for (const job of fresh) await scrubJobPayloads(deps.store, job);
        scrubbed += fresh.length;
        budget -= fresh.length;
        if (page.length < limit || (fresh.length === 0 && !resumed)) break;
        const last = page[page.length - 1];
        after = { created_at: last.created_at, id: last.id };
        // Let waiting requests run between chunks.
        await new Promise<void>((resolve) => setTimeout(resolve, 0));
      }
    }
    if (JSON.stringify(resume) !== JSON.stringify(setting.resume ?? {})) {
      await updateEntity(deps.store, deps.clock, 'retention', ws.id, KEY, WHAT, (old) => ({ max_age_days: old.max_age_days, max_count: old.max_count, ...(Object.keys(resume).length ? { resume } : {}) }));
    }
  }
  return { scrubbed };
}
