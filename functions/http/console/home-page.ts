import { Hono } from 'hono';
import { authenticate, type Principal } from '../../core/identity/auth.js';
import { ApiError } from '../../core/common/errors.js';
import { inboxFor } from '../../core/approvals/approvals-inbox.js';
import { listRuns, type RunSummary } from '../../core/console/runs.js';
import { runFilterSchema } from '../../core/console/run-filter.js';
import { listSchedules } from '../../core/triggers/schedules.js';
import { sessionOf } from '../session-cookie.js';
import { listWorkspacesOf } from '../../core/workspace/workspaces.js';
import type { CoreDeps } from '../../core/deps.js';
import type { Rights } from '../../core/identity/permissions.js';
import { html, type Markup } from '../html.js';
import { staticPage } from '../page-shell.js';
import { formatTime } from './time-format.js';

/**
 * The front door: `/` sends a person who is not signed in to the login page (which comes back
 * here), and one who is to the home of their first workspace. The home (`/w/<ws>`, above the
 * workspace's scripts and flows) shows what a person looks for first: what waits for their
 * approval, their workspace's recent runs, failing schedules, and links to everything else —
 * each read through the core with their rights, like the API.
 */
export function frontDoorRoutes(deps: CoreDeps) {
  const r = new Hono();
  r.get('/', async (c) => {
    const principal = await authenticate(deps, { bearer: null, session: sessionOf(c) }).catch((error: unknown) => {
      if (error instanceof ApiError && error.status === 401) return null;
      throw error;
    });
    if (!principal) return c.redirect('/login?next=%2F', 302);
    const [first] = await listWorkspacesOf(deps.store, principal);
    if (first) return c.redirect(`/w/${encodeURIComponent(first.id)}`, 302);
    return c.html(NO_WORKSPACE(principal.username), 200, { 'cache-control': 'no-store' });
  });
  return r;
}

const NO_WORKSPACE_PAGE = staticPage('', 'body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem}');
const NO_WORKSPACE = (username: string) =>
  NO_WORKSPACE_PAGE('svc', html`<body><h1>No workspace yet</h1><p>You are signed in as ${username}, but you belong to no workspace. Ask a workspace admin to add you.</p><p><a href="/tokens">Your tokens</a></p>`);

/** The home's sections above the workspace's items (workspace-pages.ts). */
export async function homeSections(deps: CoreDeps, principal: Principal, rights: Rights): Promise<Markup> {
  const ws = rights.workspaceId;
  const w = encodeURIComponent(ws);
  const [waiting, recent, failing] = await Promise.all([awaitingMe(deps, principal, ws), recentRuns(deps, rights), failingSchedules(deps, rights)]);
  const links = html`<nav class="toolbar" aria-label="Quick links"><a href="/w/${w}/runs">All runs</a><a href="/approvals">Approvals inbox</a><a href="/w/${w}/openapi">OpenAPI</a><a href="/w/${w}/settings">Settings</a><a href="/tokens">Your tokens</a></nav>`;
  const waitingList = waiting.length
    ? html`<ul>${waiting.map((i) => html`<li><a href="/w/${w}/run/${encodeURIComponent(i.run)}">${i.path}</a> — ${i.what}</li>`)}</ul><p><a href="/approvals">Decide in the approvals inbox</a></p>`
    : html`<p class="muted">Nothing waits for you.</p>`;
  const runRows = recent.map(
    (run) => html`<tr><td><span class="status s-${run.status}">${run.status.replace('_', ' ')}</span></td><td><a href="/w/${w}/run/${encodeURIComponent(run.id)}">${run.path}</a></td><td>${formatTime(run.created_at)}</td><td class="wide">${run.created_by}</td></tr>`,
  );
  const runsTable = recent.length
    ? html`<div class="table-wrap"><table aria-label="Recent runs"><thead><tr><th scope="col">Status</th><th scope="col">Path</th><th scope="col">Created</th><th scope="col" class="wide">By</th></tr></thead><tbody>${runRows}</tbody></table></div>`
    : html`<p class="muted">No runs yet.</p>`;
  const failingPart =
    failing === null
      ? ''
      : html`<section aria-labelledby="failing-schedules"><h2 id="failing-schedules">Failing schedules</h2>${
          failing.length
            ? html`<ul>${failing.map((s) => html`<li><code>${s.path}</code> — ${s.streak} run${s.streak === 1 ? '' : 's'} failed in a row${s.job ? html` (<a href="/w/${w}/run/${encodeURIComponent(s.job)}">last failure</a>)` : ''}${s.enabled ? '' : ' (disabled)'}</li>`)}</ul>`
            : html`<p class="muted">No schedule is failing.</p>`
        }</section>`;
  return html`${links}
<section aria-labelledby="awaiting-me"><h2 id="awaiting-me">Awaiting your approval</h2>${waitingList}</section>
<section aria-labelledby="recent-runs"><h2 id="recent-runs">Recent runs</h2>${runsTable}</section>
${failingPart}`;
}

async function awaitingMe(deps: CoreDeps, principal: Principal, ws: string): Promise<{ run: string; path: string; what: string }[]> {
  // Narrowed to this workspace: the inbox then scans only its runs.
  const inbox = await inboxFor(deps, { ...principal, workspaceId: ws });
  return [
    ...inbox.gates.map((g) => ({ run: g.run_id, path: g.flow_path, what: `ConsentGate ${g.step_id}, asked by ${g.triggered_by}` })),
    ...inbox.steps.map((s) => ({ run: s.run_id, path: s.view.flowPath, what: 'approval step' })),
  ];
}

async function recentRuns(deps: CoreDeps, rights: Rights): Promise<RunSummary[]> {
  if (!rights.can('jobs', 'read')) return [];
  return (await listRuns(deps, rights, runFilterSchema.parse({ top_level: '1', per_page: 10 }))).runs;
}

async function failingSchedules(deps: CoreDeps, rights: Rights): Promise<{ path: string; streak: number; job: string | null; enabled: boolean }[] | null> {
  if (!rights.can('schedules', 'read')) return null;
  return (await listSchedules(deps, rights))
    .filter((s) => s.failure_streak > 0)
    .map((s) => ({ path: s.path, streak: s.failure_streak, job: s.last_failure?.job_id ?? null, enabled: s.enabled }));
}
