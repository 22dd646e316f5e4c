import { ApiError } from './errors.js';
import { awaitFinished, syncTimeout } from './jobs.js';
import { shapeSyncResponse, InvalidResponseShape, type ShapedResponse } from './sync-response.js';
import type { CoreDeps } from './deps.js';
import type { Job } from '../ports.js';

/**
 * The sync endpoints' answer for a pushed job: wait (at most the instance maximum), shape the
 * result (spec 4.4, 7.1-7.2), then honour the script's delete-after-use setting.
 */
export async function syncResponse(deps: CoreDeps, job: Job): Promise<ShapedResponse> {
  const done = await awaitFinished(deps, job.workspace_id, job.id, deps.config.syncMaxWaitMs);
  if (!done) throw syncTimeout(job.id, deps.config.syncMaxWaitMs, job.workspace_id);
  try {
    // A failed job's result is `{error: {...}}`, answered with 200 like any result (spec 7.1).
    return shapeSyncResponse(done.result);
  } catch (e) {
    if (e instanceof InvalidResponseShape) throw new ApiError(500, e.code, e.message, { job_id: job.id });
    throw e;
  } finally {
    if (done.delete_after_use) await deps.store.scrubJob(done.id);
  }
}
