import { createHash } from 'node:crypto';
import { Hono } from 'hono';
import { authenticate } from '../core/identity/auth.js';
import { inboxFor, type Inbox, type WaitingGate, type WaitingStep } from '../core/approvals/approvals-inbox.js';
import type { ApprovalAuditEntry } from '../core/flows/run-state.js';
import { sessionOf } from './session-cookie.js';
import type { CoreDeps } from '../core/deps.js';
import { renderFormFields, type ResumeFormSchema } from './approval-form.js';
import { APPROVAL_STYLE } from './approval-page.js';
import { html, raw, type Markup } from './html.js';
import { descriptionMarkup, renderBudget, type RenderBudget } from './render-all.js';
import { consoleBundle, type StaticAsset } from './console/static-assets.js';

/**
 * `/approvals`: what waits for the logged-in person. Runs at a ConsentGate, with the rendered
 * message and Approve / Reject with a reason, decided through the consent endpoint; suspended
 * approval steps, with their description and form, approved through a resume URL signed for this
 * person and rejected through its cancel URL. Both carry the session cookie, so the page and the
 * API keep one set of rules.
 */


const STYLE = `${APPROVAL_STYLE}
article { border: 1px solid var(--line); border-radius: 8px; padding: 1rem; margin: 1rem 0; }
h2 { font-size: 1.15rem; margin: 0 0 .5rem; }
.message { white-space: pre-wrap; } textarea[name=decision_reason] { width: 100%; min-height: 3rem; } .meta { color: var(--muted); font-size: .9rem; }
.history { font-size: .85rem; color: var(--muted); }`;

const hash = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
/** The page's script is the typed bundle (console/browser/approvals-inbox.ts), allowed by its hash. */
const csp = (bundle: StaticAsset) => ["default-src 'none'", `script-src 'sha256-${bundle.hash}'`, `style-src ${hash(STYLE)}`, 'img-src data:', "connect-src 'self'", "base-uri 'none'", "form-action 'none'"].join('; ');

export function renderApprovalsPage(viewer: string, inbox: Inbox, switchAccountUrl: string): string {
  const gates = inbox.gates.map(gateItem);
  // One budget for the page's markdown, however many steps wait (render-all.ts).
  const budget = renderBudget();
  const steps = inbox.steps.map((step, i) => stepItem(step, i, budget));
  const nothing = gates.length === 0 && steps.length === 0;
  const bundle = consoleBundle('approvals-inbox');
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${csp(bundle)}"><meta name="referrer" content="no-referrer"><title>Approvals</title><style>${raw(STYLE)}</style></head>
<body><main><h1>Approvals</h1><p class="meta" id="viewer">Logged in as ${viewer}. <a id="switch-account" href="${switchAccountUrl}">Switch account</a></p>
${nothing ? html`<p>Nothing waits for your decision.</p>` : ''}
${gates.length > 0 ? html`<section aria-label="Consent gates"><h2>Consent gates</h2>\n${gates}</section>` : ''}
${steps.length > 0 ? html`<section aria-label="Approval steps"><h2>Approval steps</h2>\n${steps}</section>` : ''}
</main><script src="${bundle.url}" integrity="sha256-${bundle.hash}"></script></body></html>`.toString();
}

function gateItem(g: WaitingGate): Markup {
  return html`<article aria-label="${`${g.flow_path} ${g.run_id}`}">
<h2>${g.flow_path} <small>step ${g.step_id}</small></h2>
<p class="message">${g.message}</p>
<p class="meta">run ${g.run_id} in ${g.workspace}, started by ${g.triggered_by}${g.deadline ? html`, decide before ${g.deadline}` : ''}</p>
${history(g.audit)}<form data-run="${g.run_id}"><label>Reason <textarea name="decision_reason"></textarea></label>
<button type="submit" value="approved">Approve</button> <button type="submit" value="rejected" class="danger">Reject</button>
<p role="status"></p></form>
</article>
`;
}

function stepItem(s: WaitingStep, index: number, budget: RenderBudget): Markup {
  const v = s.view;
  const schema: ResumeFormSchema | null = v.formSchema && typeof v.formSchema.properties === 'object' ? v.formSchema : null;
  const description = descriptionMarkup(v.description, budget);
  return html`<article aria-label="${`${v.flowPath} step ${v.stepId} ${s.run_id}`}">
<h2>${v.flowSummary || v.flowPath} <small>step ${v.stepSummary || v.stepId}</small></h2>
${description ? html`<section class="description" aria-label="Description">${description}</section>` : ''}
<p class="meta">run ${s.run_id} (${v.flowPath}) in ${s.workspace}, started by ${v.triggeredBy}; ${v.approvalsReceived} of ${v.approvalsRequired} approvals received${s.deadline ? html`; decide before ${s.deadline}` : ''}</p>
${history(s.audit)}<form data-resume="${s.resume_url}"${s.cancel_url ? html` data-cancel="${s.cancel_url}"` : ''}>
${schema ? renderFormFields(schema, v.defaultArgs ?? {}, v.enums ?? {}, `step${index}`) : ''}
${s.cancel_url ? html`<label>Reason for a rejection <textarea name="decision_reason"></textarea></label>\n` : ''}<button type="submit" value="approved">Approve</button>${s.cancel_url ? html` <button type="submit" value="rejected" class="danger" formnovalidate>Reject</button>` : ''}
<p role="status"></p></form>
</article>
`;
}

/** The audit trail so far (issue 17 point 5): who was told, who approved, when and how. */
function history(entries: ApprovalAuditEntry[]): Markup | string {
  if (entries.length === 0) return '';
  const items = entries.map((e) => html`<li>${e.at ?? ''} ${e.event}${e.who ? html` · ${e.who}` : ''} · ${e.via}${e.reason ? html` · ${e.reason}` : ''}</li>`);
  return html`<details class="history"><summary>History</summary><ul>${items}</ul></details>\n`;
}

export function approvalsPageRoutes(deps: CoreDeps) {
  const r = new Hono();
  r.get('/approvals', async (c) => {
    const session = sessionOf(c);
    const principal = session ? await authenticate(deps, { bearer: null, session }).catch(() => null) : null;
    const login = `/login?next=${encodeURIComponent('/approvals')}`;
    if (!principal) return c.redirect(login, 302);
    const page = renderApprovalsPage(principal.username, await inboxFor(deps, principal), login);
    return c.html(page, 200, { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
  });
  return r;
}
