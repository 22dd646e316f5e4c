import { Hono } from 'hono';
import { authenticate, type Principal } from '../core/identity/auth.js';
import { ApiError } from '../core/common/errors.js';
import { approvalView, resumeUrls } from '../core/approvals/resume.js';
import { requireWorkspace } from '../core/workspace/workspaces.js';
import { sessionOf } from './session-cookie.js';
import type { CoreDeps } from '../core/deps.js';
import { renderApprovalPage } from './approval-page.js';
import { resumeIdOf } from './flow-routes.js';
import { html } from './html.js';
import { queryFlag } from './list-query.js';

/**
 * The approval page of each resume URL (spec 2.4-2.6). The signed URL is the secret; a session
 * cookie, when there is one, says who is looking, for the login, self-approval and group options.
 */
export function approvalRoutes(deps: CoreDeps) {
  const r = new Hono();

  r.get('/approve/:workspace/:job/:resumeId/:signature', async (c) => {
    try {
      const workspace = await requireWorkspace(deps.store, c.req.param('workspace'));
      const session = sessionOf(c);
      const principal: Principal | null = session ? await authenticate(deps, { bearer: null, session }).catch(() => null) : null;
      const approver = c.req.query('approver') || null;
      const flowLevel = queryFlag(c, 'flow_level');
      const req = { workspaceId: workspace.id, stepJobId: c.req.param('job'), resumeId: resumeIdOf(c.req.param('resumeId')), signature: c.req.param('signature'), approver, flowLevel, principal };
      const view = await approvalView(deps, req);
      // Same-origin paths, so the page's fetches carry the session cookie and pass its CSP.
      const urls = resumeUrls({ config: { ...deps.config, baseInternalUrl: '' } }, req);
      // The login page comes back to this very page, signed URL and all (same origin, no Referer).
      const loginHere = `/login?next=${encodeURIComponent(c.req.url.slice(new URL(c.req.url).origin.length))}`;
      const html = renderApprovalPage({
        ...view,
        workspace: workspace.id,
        resumeUrl: urls.resume,
        cancelUrl: view.hideCancel ? null : urls.cancel,
        viewer: principal?.username ?? null,
        loginUrl: view.loginWouldHelp ? loginHere : undefined,
        switchAccountUrl: loginHere,
      });
      return c.html(html, 200, { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      return c.html(errorPage(e.message), e.status as 400, { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
    }
  });

  return r;
}

function errorPage(message: string): string {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'"><title>Approval</title></head><body><h1>Approval</h1><p>${message}</p></body></html>`.toString();
}
