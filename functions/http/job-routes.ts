import { Hono } from 'hono';
import { z } from 'zod';
import { ApiError, badRequest } from '../core/common/errors.js';
import { getVisibleJob, isFinished, jobView, listJobs } from '../core/jobs/jobs.js';
import { cancelJob } from '../core/jobs/cancel-job.js';
import { parseBody } from '../core/common/validation.js';
import type { CoreDeps } from '../core/deps.js';
import type { JobStatus } from '../ports.js';
import type { AppEnv } from './context.js';
import { parseJsonBody } from './json-body.js';
import { downloadUpload } from '../core/uploads/uploads.js';
import { getJobLogUpdate, parseLogOffset } from '../core/jobs/job-log-update.js';
import { getFlowRun, waitingStatus, withFlowStatus } from '../core/flows/run-state.js';
import { requestText } from './request-text.js';
import { listQueryOf } from './list-query.js';

export const listQuery = z.strictObject({
  script_path_exact: z.string().optional(),
  schedule_path: z.string().optional(),
  status: z.enum(['queued', 'running', 'suspended', 'awaiting_approval', 'success', 'failed', 'canceled']).optional(),
  per_page: z.coerce.number().int().min(1).max(1000).default(30),
  page: z.coerce.number().int().min(1).max(1000).default(1),
});

/** How deep `jobs/list` pages by `page` (each page reads the ones before it); `jobs/runs` pages further by cursor. */
const MAX_LISTED_JOBS = 10_000;

export const cancelBody = z.strictObject({ reason: z.string().max(1000).optional() });

export function jobRoutes(deps: CoreDeps) {
  const r = new Hono<AppEnv>();

  r.get('/jobs_u/get/:id', async (c) => {
    const job = await getVisibleJob(deps, c.get('rights'), c.req.param('id'));
    const run = job.kind === 'flow' ? await getFlowRun(deps, job.workspace_id, job.id) : null;
    return c.json(withFlowStatus(jobView(job), run));
  });

  // Polled by clients printing a job's logs while it runs (the CLI's run commands).
  r.get('/jobs_u/getupdate/:id', async (c) => {
    const offset = parseLogOffset(c.req.query('log_offset'));
    return c.json(await getJobLogUpdate(deps, c.get('rights'), c.req.param('id'), offset));
  });

  r.get('/jobs_u/completed/get_result/:id', async (c) => {
    const job = await getVisibleJob(deps, c.get('rights'), c.req.param('id'));
    if (!isFinished(job.status)) throw new ApiError(404, 'not_completed', `job ${job.id} has not completed yet (${job.status})`);
    // Deleted after use (spec 4.4): there is no result any more, which is not the same as a null one.
    if (job.deleted) throw new ApiError(404, 'result_deleted', `the result of job ${job.id} was deleted after use`);
    return c.json(job.result);
  });

  // Windmill's route for files a job was given by s3 key: always a download, never rendered here.
  r.get('/job_helpers/download_s3_file', async (c) => {
    const file = await downloadUpload(deps, c.get('rights'), c.req.query('file_key'));
    // On S3 the bytes come from the bucket itself (clients drop the token on the redirect).
    if ('redirect' in file) return c.redirect(file.redirect, 307);
    // Streamed: a file of gigabytes is never held in memory here.
    return new Response(file.body, {
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(file.size), 'content-disposition': `attachment; filename="${file.fileName}"` },
    });
  });

  r.post('/jobs_u/queue/cancel/:id', async (c) => {
    // The reason is optional, so an empty or non-JSON body is accepted as "no reason".
    const text = await requestText(c);
    let body: unknown = {};
    if (text.trim()) body = parseJsonBody(text);
    const { reason } = parseBody(cancelBody, body);
    const job = await cancelJob(deps, c.get('rights'), c.req.param('id'), reason);
    return c.text(`job ${job.id} canceled`);
  });

  r.get('/jobs/list', async (c) => {
    const q = listQueryOf(c, listQuery);
    const end = q.page * q.per_page;
    if (end > MAX_LISTED_JOBS) throw badRequest('invalid_input', `page: page × per_page may be at most ${MAX_LISTED_JOBS}; jobs/runs pages further by cursor`, { field: 'page' });
    // A flow waiting for approvals or a consent decision is stored as `running`: it is filtered by its run.
    const waiting = q.status === 'suspended' || q.status === 'awaiting_approval';
    const jobs = await listJobs(deps, c.get('rights'), {
      status: waiting ? 'running' : (q.status as JobStatus | undefined),
      // Only flows wait so: the store may serve running flows from an index of their own.
      ...(waiting ? { kind: 'flow' as const } : {}),
      script_path: q.script_path_exact,
      schedule_path: q.schedule_path,
      limit: waiting ? 1000 : end,
    });
    const views = await Promise.all(jobs.map(async (job) => {
      const view = jobView(job);
      const run = job.kind === 'flow' && job.status === 'running' ? await getFlowRun(deps, job.workspace_id, job.id) : null;
      return run ? { ...view, status: waitingStatus(run, view.status) } : view;
    }));
    return c.json((waiting ? views.filter((v) => v.status === q.status) : views).slice(end - q.per_page, end));
  });

  return r;
}
