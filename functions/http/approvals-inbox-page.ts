import { createHash } from 'node:crypto';
import { Hono } from 'hono';
import { getCookie } from 'hono/cookie';
import { authenticate } from '../core/auth.js';
import { waitingGatesFor, type WaitingGate } from '../core/flows/approvals-inbox.js';
import { SESSION_COOKIE } from '../core/users.js';
import type { CoreDeps } from '../core/deps.js';
import { html, raw } from './html.js';

/**
 * `/approvals`: the runs waiting at a ConsentGate for the logged-in person, with the rendered
 * message and Approve / Reject with a reason. Decisions go through the consent endpoint with the
 * session cookie, so the page and the API keep one set of rules.
 */

// Static: the run id comes from the form's data attribute, never from the request.
const SCRIPT = `
for (const form of document.querySelectorAll('form[data-run]')) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const status = form.querySelector('[role=status]');
    const decision = event.submitter && event.submitter.value;
    const reason = form.querySelector('textarea').value;
    const res = await fetch('/api/v1/runs/' + encodeURIComponent(form.dataset.run) + '/consent', {
      method: 'POST', headers: { 'content-type': 'application/json' }, credentials: 'same-origin',
      body: JSON.stringify({ decision, reason }),
    });
    const answer = await res.json().catch(() => null);
    if (!res.ok) {
      status.textContent = (answer && answer.error && answer.error.message) || ('failed: ' + res.status);
      return;
    }
    status.textContent = decision === 'approved' ? 'Approved: the run goes on.' : 'Rejected: the run failed.';
    for (const b of form.querySelectorAll('button, textarea')) b.disabled = true;
  });
}
`;

const STYLE = `body { font: 16px/1.5 system-ui, sans-serif; max-width: 48rem; margin: 2rem auto; padding: 0 1rem; }
article { border: 1px solid #ccc; border-radius: 6px; padding: 1rem; margin: 1rem 0; }
.message { white-space: pre-wrap; } textarea { width: 100%; min-height: 3rem; } .meta { color: #555; font-size: .9rem; }`;

const hash = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
const CSP = ["default-src 'none'", `script-src ${hash(SCRIPT)}`, `style-src ${hash(STYLE)}`, "connect-src 'self'", "base-uri 'none'", "form-action 'none'"].join('; ');

export function renderApprovalsPage(viewer: string, gates: WaitingGate[]): string {
  const items = gates.map(
    (g) => html`<article aria-label="${`${g.flow_path} ${g.run_id}`}">
<h2>${g.flow_path} <small>step ${g.step_id}</small></h2>
<p class="message">${g.message}</p>
<p class="meta">run ${g.run_id} in ${g.workspace}, started by ${g.triggered_by}${g.deadline ? html`, decide before ${g.deadline}` : ''}</p>
<form data-run="${g.run_id}"><label>Reason <textarea name="reason"></textarea></label>
<button type="submit" value="approved">Approve</button> <button type="submit" value="rejected">Reject</button>
<p role="status"></p></form>
</article>
`,
  );
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${CSP}"><title>Approvals</title><style>${raw(STYLE)}</style></head>
<body><main><h1>Approvals</h1><p class="meta">Logged in as ${viewer}.</p>
${items.length > 0 ? items : html`<p>Nothing waits for your decision.</p>`}
</main><script>${raw(SCRIPT)}</script></body></html>`.toString();
}

export function approvalsPageRoutes(deps: CoreDeps) {
  const r = new Hono();
  r.get('/approvals', async (c) => {
    const session = getCookie(c, SESSION_COOKIE) ?? null;
    const principal = session ? await authenticate(deps, { bearer: null, session }).catch(() => null) : null;
    if (!principal) return c.redirect(`/login?next=${encodeURIComponent('/approvals')}`, 302);
    const html = renderApprovalsPage(principal.username, await waitingGatesFor(deps, principal));
    return c.html(html, 200, { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
  });
  return r;
}
