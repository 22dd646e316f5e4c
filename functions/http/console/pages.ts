import { Hono } from 'hono';
import type * as AnsiUpModule from 'ansi_up';
import { onFirstUse, requireHere } from '../../core/common/on-first-use.js';
import { ApiError } from '../../core/common/errors.js';
import { getVisibleJob, isFinished } from '../../core/jobs/jobs.js';
import { getFlowRun } from '../../core/flows/run-state.js';
import { subflowRuns } from '../../core/flows/subflow-runs.js';
import { findFlowVersion } from '../../core/flows/flows.js';
import { isPreviewHash } from '../../core/scripts/script-preview.js';
import { waitingOnPerson } from '../../core/approvals/approvals-inbox.js';
import { getJobLogUpdate, parseLogOffset } from '../../core/jobs/job-log-update.js';
import type { CoreDeps } from '../../core/deps.js';
import { html } from '../html.js';
import { approvalFragment } from './approval-fragment.js';
import { notAvailable, pageAccess, pageResponse } from './layout.js';
import { renderRunPage } from './run-page.js';
import { renderRunsPage } from './runs-page.js';
import { workspacePageRoutes } from './workspace-pages.js';
import { frontDoorRoutes } from './home-page.js';
import { CONSOLE_BUNDLES, consoleBundle, uplotScript } from './static-assets.js';
import { scriptEditorRoutes } from './script-editor-page.js';
import { flowEditorRoutes } from './flow-editor-page.js';
import { holdingsPageRoutes } from './holdings-pages.js';
import { peoplePageRoutes } from './people-pages.js';

/** Loaded with the first log shown in colour (on-first-use.ts). */
const ansiUp = onFirstUse(() => (typeof require === 'function' ? require('ansi_up') : requireHere('ansi_up')) as typeof AnsiUpModule);

/**
 * The console's pages (`/w/<ws>/...`), served by the same Hono app in both shells. Every read
 * goes through the core with the logged-in person's rights, exactly as the API's routes do.
 */
export function consolePageRoutes(deps: CoreDeps) {
  const r = new Hono();

  // Versioned by content: a new uPlot is a new URL, so the file can be cached for good.
  r.get('/console/assets/:name', (c) => {
    const name = c.req.param('name');
    // By its whole URL: one bundle's name may begin another's (script-editor, script-editor-page).
    const asset = [...CONSOLE_BUNDLES.map(consoleBundle), uplotScript()].find((a) => a.url === c.req.path);
    if (!asset) return c.json({ error: { code: 'not_found', message: 'no such console asset' } }, 404);
    return c.body(asset.text, 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=31536000, immutable' });
  });

  r.get('/w/:workspace/runs', async (c) => {
    const access = await pageAccess(deps, c);
    if (!access.ok) return access.response;
    return pageResponse(c, renderRunsPage(access.rights.workspaceId, access.principal.username, c.req.query()));
  });

  r.get('/w/:workspace/run/:id', async (c) => {
    const access = await pageAccess(deps, c);
    if (!access.ok) return access.response;
    const { rights, principal } = access;
    let job;
    try {
      job = await getVisibleJob(deps, rights, c.req.param('id'));
    } catch (error) {
      if (!(error instanceof ApiError) || (error.status !== 403 && error.status !== 404)) throw error;
      return notAvailable(c, { workspace: rights.workspaceId, username: principal.username }, error.message, error.status);
    }
    const run = job.kind === 'flow' ? await getFlowRun(deps, job.workspace_id, job.id) : null;
    const version = job.kind === 'flow' && job.flow_version !== null ? await findFlowVersion(deps.store, job.workspace_id, job.flow_version) : null;
    const domain = job.kind === 'flow' ? 'flows' : 'scripts';
    // An editor's test run ran code or a flow that was not saved: nothing runs it again.
    const testRun = job.kind === 'flow' ? version?.preview === true : job.script_hash !== null && isPreviewHash(job.script_hash);
    return pageResponse(
      c,
      renderRunPage({
        workspace: rights.workspaceId,
        username: principal.username,
        job,
        canCancel: !isFinished(job.status) && rights.canJob(job, 'cancel'),
        canRerun: !testRun && job.kind !== 'flowstep' && job.parent_job === null && rights.can(domain, 'run', job.script_path),
        // A flow the runner has not started yet has no run state: its graph is its version's.
        modules: run ? run.modules : (version?.value.modules ?? null),
        failureModule: run ? (run.failure_module ?? null) : (version?.value.failure_module ?? null),
      }),
    );
  });

  // The API's live log update with the new text as HTML: ANSI colours become spans, everything
  // else escaped (ansi_up escapes the text it converts).
  r.get('/w/:workspace/run/:id/logs', async (c) => {
    const access = await pageAccess(deps, c);
    if (!access.ok) return c.json({ error: { code: 'unauthorized', message: 'log in first' } }, 401);
    const update = await getJobLogUpdate(deps, access.rights, c.req.param('id'), parseLogOffset(c.req.query('log_offset')));
    // Classes rather than style attributes: the page's CSP allows no inline style.
    const ansi = new ansiUp.AnsiUp();
    ansi.use_classes = true;
    return c.json({ ...update, html: ansi.ansi_to_html(update.new_logs) }, 200, { 'cache-control': 'no-store' });
  });

  // The runs of the flow's loops and branches, for the steps inside them on the run page's graph.
  r.get('/w/:workspace/run/:id/subflows', async (c) => {
    const access = await pageAccess(deps, c);
    if (!access.ok) return c.json({ error: { code: 'unauthorized', message: 'log in first' } }, 401);
    return c.json(await subflowRuns(deps, access.rights, c.req.param('id')), 200, { 'cache-control': 'no-store' });
  });

  r.get('/w/:workspace/run/:id/approval', async (c) => {
    const access = await pageAccess(deps, c);
    if (!access.ok) return c.text('', 401);
    const job = await getVisibleJob(deps, access.rights, c.req.param('id'));
    return c.html(approvalFragment(await waitingOnPerson(deps, access.principal, access.rights, job)), 200, { 'cache-control': 'no-store' });
  });

  r.route('/', frontDoorRoutes(deps));
  r.route('/', workspacePageRoutes(deps));
  r.route('/', scriptEditorRoutes(deps));
  r.route('/', flowEditorRoutes(deps));
  r.route('/', holdingsPageRoutes(deps));
  r.route('/', peoplePageRoutes(deps));
  return r;
}
