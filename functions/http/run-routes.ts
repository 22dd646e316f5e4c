import { startFlowPreview } from '../core/flows/flow-preview.js';
import { Hono, type Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { newUuid } from '../core/common/crypto.js';
import { ApiError, notFound } from '../core/common/errors.js';
import { argsFromRequest } from '../core/runs/payload.js';
import { getVisibleJob, type CallerWait } from '../core/jobs/jobs.js';
import { resolveForCaller, startRun, webhookOrigin } from '../core/runs/start-run.js';
import { startPreview } from '../core/scripts/script-preview.js';
import { readJsonBody } from './json-body.js';
import type { RunTarget } from '../core/jobs/run-target.js';
import type { Job } from '../ports.js';
import { syncResponse } from '../core/runs/sync-run.js';
import { bearerToken } from './bearer.js';
import { jobUpdates } from '../core/runs/job-updates.js';
import { parseLogOffset } from '../core/jobs/job-log-update.js';
import type { CoreDeps } from '../core/deps.js';
import type { AppEnv } from './context.js';
import { toIncoming } from './incoming.js';
import { freshRights } from './fresh-rights.js';
import { queryFlag } from './list-query.js';

/** The webhook endpoints of spec 4.1: async, sync and SSE, by path (latest) or by hash (fixed). */
export function runRoutes(deps: CoreDeps, sseKeepAliveMs: number, sseMaxMs?: number) {
  const r = new Hono<AppEnv>();

  const argsOf = async (c: Context<AppEnv>, ownerPath: string) => {
    const workspace = c.get('workspace');
    return argsFromRequest(await toIncoming(c, { maxFileBytes: deps.config.uploads.maxBytes, stream: true }), {
      ownerPath,
      workspaceId: workspace.id,
      objectStorageEnabled: workspace.object_storage_enabled,
      blobs: deps.blobs,
      includeHeaders: deps.config.includeHeaders,
      newId: newUuid,
    });
  };

  /** The core resolves and checks the target before the body is read: a 403 or 404 comes first. */
  const push = async (c: Context<AppEnv>, target: RunTarget, id?: string, wait?: CallerWait): Promise<Job> => {
    const rights = c.get('rights');
    const origin = webhookOrigin(c.req.header('x-svc-trigger'));
    const runnable = await resolveForCaller(deps, rights, target);
    const ownerPath = runnable.kind === 'flow' ? runnable.flow.path : runnable.script.path;
    return startRun(deps, rights, runnable, await argsOf(c, ownerPath), id, origin, wait);
  };

  const runAsync = async (c: Context<AppEnv>, target: RunTarget) => c.text((await push(c, target)).id, 201);

  /** Starts a job with `start` and answers its result when it ends (the sync endpoints). */
  const answerSync = async (c: Context<AppEnv>, start: (id: string, wait: CallerWait) => Promise<Job>) => {
    // A token in the URL or a session cookie travel with a link: no redirects or credential prompts then (sync-response.ts).
    const navigation = bearerToken(c.req.header('authorization'), undefined) !== null;
    const shaped = await syncResponse(deps, start, { navigation });
    return new Response(shaped.body, { status: shaped.status, headers: shaped.headers });
  };
  const runSync = (c: Context<AppEnv>, target: RunTarget) => answerSync(c, (id, wait) => push(c, target, id, wait));

  const runStream = async (c: Context<AppEnv>, target: RunTarget) => {
    // The stream lasts as long as the job: its caller waits too.
    const job = await push(c, target, undefined, { callerWaits: true });
    return sse(c, deps, job.workspace_id, job.id, { fast: true, keepAliveMs: sseKeepAliveMs, maxMs: sseMaxMs });
  };

  const byPath = (c: Context<AppEnv>): RunTarget => ({ by: 'path', path: c.req.param('path') as string });
  const byVersion = (c: Context<AppEnv>): RunTarget => ({ by: 'flow_version', version: c.req.param('version') as string });
  const byHash = (c: Context<AppEnv>): RunTarget => ({ by: 'hash', hash: c.req.param('hash') as string });
  const byFlowPath = (c: Context<AppEnv>): RunTarget => ({ by: 'path', path: c.req.param('path') as string, only: 'flow' });

  // A test run of unsaved code (the script editor; Windmill's jobs/run/preview), and of an unsaved
  // flow (the flow editor; jobs/run/preview_flow); Windmill's clients also wait for their results.
  const origin = (c: Context<AppEnv>) => webhookOrigin(c.req.header('x-svc-trigger'));
  r.post('/jobs/run/preview', async (c) => c.text((await startPreview(deps, c.get('rights'), await readJsonBody(c), origin(c))).id, 201));
  r.post('/jobs/run/preview_flow', async (c) => c.text((await startFlowPreview(deps, c.get('rights'), await readJsonBody(c), origin(c))).id, 201));
  r.post('/jobs/run_wait_result/preview', (c) => answerSync(c, async (id, wait) => startPreview(deps, c.get('rights'), await readJsonBody(c), origin(c), wait, id)));
  r.post('/jobs/run_wait_result/preview_flow', (c) => answerSync(c, async (id) => startFlowPreview(deps, c.get('rights'), await readJsonBody(c), origin(c), id)));
  r.post('/jobs/run/p/:path{.+}', (c) => runAsync(c, byPath(c)));
  r.post('/jobs/run/h/:hash', (c) => runAsync(c, byHash(c)));
  r.on(['GET', 'POST'], '/jobs/run_wait_result/p/:path{.+}', (c) => runSync(c, byPath(c)));
  r.on(['GET', 'POST'], '/jobs/run_wait_result/h/:hash', (c) => runSync(c, byHash(c)));
  r.on(['GET', 'POST'], '/jobs/run_and_stream/p/:path{.+}', (c) => runStream(c, byPath(c)));
  r.on(['GET', 'POST'], '/jobs/run_and_stream/h/:hash', (c) => runStream(c, byHash(c)));
  r.post('/jobs/run/fv/:version', (c) => runAsync(c, byVersion(c)));
  r.on(['GET', 'POST'], '/jobs/run_wait_result/fv/:version', (c) => runSync(c, byVersion(c)));
  r.on(['GET', 'POST'], '/jobs/run_and_stream/fv/:version', (c) => runStream(c, byVersion(c)));
  // docs/spec.md 4.1: `/f/<path>` is accepted as an alias for flows.
  r.post('/jobs/run/f/:path{.+}', (c) => runAsync(c, byFlowPath(c)));
  r.on(['GET', 'POST'], '/jobs/run_wait_result/f/:path{.+}', (c) => runSync(c, byFlowPath(c)));
  r.on(['GET', 'POST'], '/jobs/run_and_stream/f/:path{.+}', (c) => runStream(c, byFlowPath(c)));

  // The spec writes `job_u`; Windmill clients use `jobs_u`: both reach the same stream.
  for (const prefix of ['/job_u', '/jobs_u']) {
    r.get(`${prefix}/getupdate_sse/:id`, async (c) => {
      const id = c.req.param('id');
      // Resolve the job before the stream opens, so an unknown id is a plain 404.
      await getVisibleJob(deps, c.get('rights'), id);
      const offset = c.req.query('stream_offset');
      if (offset !== undefined && !/^\d{1,15}$/.test(offset)) {
        throw new ApiError(400, 'invalid_request', 'stream_offset must be a non-negative integer', { field: 'stream_offset' });
      }
      // Following an existing job, its logs come too (Windmill's getupdate_sse), from `log_offset` on.
      const logOffset = parseLogOffset(c.req.query('log_offset'));
      return sse(c, deps, c.get('workspace').id, id, { fast: queryFlag(c, 'fast'), keepAliveMs: sseKeepAliveMs, maxMs: sseMaxMs, streamOffset: Number(offset ?? 0), logOffset });
    });
  }
  return r;
}

interface SseOptions {
  fast: boolean;
  keepAliveMs: number;
  /** The longest a stream may last (the shell's limit on a response); past it a `timeout` event ends it. */
  maxMs?: number;
  streamOffset?: number;
  logOffset?: number;
}

/**
 * Writes the job's updates as SSE events. A job may be silent for minutes; a comment line (which
 * SSE clients ignore) goes out whenever nothing else did for `keepAliveMs`, so proxies and load
 * balancers with idle timeouts keep the stream open. A stream that would outlast `maxMs` ends
 * with a `timeout` event that says where to resume.
 */
function sse(c: Context<AppEnv>, deps: CoreDeps, workspaceId: string, jobId: string, opts: SseOptions) {
  const { fast, keepAliveMs, maxMs, streamOffset, logOffset } = opts;
  const endBy = maxMs === undefined ? undefined : deps.clock.now().getTime() + maxMs;
  return streamSSE(c, async (stream) => {
    const updates = jobUpdates(deps, workspaceId, jobId, { fast, streamOffset, logOffset, endBy });
    let next = updates.next();
    let checkedAt = Date.now();
    for (;;) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const silence = new Promise<'silence'>((resolve) => (timer = setTimeout(() => resolve('silence'), keepAliveMs)));
      const step = await Promise.race([next, silence]);
      clearTimeout(timer);
      // Who asks, again, once a second at most: a stream may outlast its caller's token or membership.
      if (!stream.aborted && Date.now() - checkedAt >= STILL_ALLOWED_EVERY_MS) {
        checkedAt = Date.now();
        if (!(await stillReads(deps, c, jobId))) {
          await updates.return(undefined);
          return;
        }
      }
      if (stream.aborted) {
        await updates.return(undefined);
        return;
      }
      if (step === 'silence') {
        await stream.write(': keep-alive\n\n');
        continue;
      }
      if (step.done) return;
      await stream.writeSSE({ data: JSON.stringify(step.value) });
      next = updates.next();
    }
  });
}

const STILL_ALLOWED_EVERY_MS = 1000;

/** Whether the caller, as they are now, may still read the job (fresh-rights.ts). */
async function stillReads(deps: CoreDeps, c: Context<AppEnv>, jobId: string): Promise<boolean> {
  const rights = await freshRights(deps, c);
  if (!rights) return false;
  return getVisibleJob(deps, rights, jobId).then(
    () => true,
    () => false,
  );
}
