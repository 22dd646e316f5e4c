import { z } from 'zod';
import { ApiError } from '../common/errors.js';
import { getVisibleJob, isFinished } from './jobs.js';
import type { CoreDeps } from '../deps.js';
import type { Rights } from '../identity/permissions.js';

/** What `jobs_u/getupdate/{id}` answers: the logs since `log_offset` (in characters) and the new offset. */
export interface JobLogUpdate {
  running: boolean;
  completed: boolean;
  new_logs: string;
  log_offset: number;
}

const offsetSchema = z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export function parseLogOffset(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 0;
  const parsed = offsetSchema.safeParse(raw);
  if (!parsed.success) throw new ApiError(400, 'invalid_input', 'log_offset: must be a non-negative integer', { field: 'log_offset' });
  return parsed.data;
}

/** Same read rights as the job get route; an offset past the end gives no new logs. */
export async function getJobLogUpdate(deps: CoreDeps, rights: Rights, id: string, logOffset: number): Promise<JobLogUpdate> {
  const job = await getVisibleJob(deps, rights, id);
  const logs = job.logs ?? '';
  const from = Math.min(logOffset, logs.length);
  return { running: job.status === 'running', completed: isFinished(job.status), new_logs: logs.slice(from), log_offset: logs.length };
}
