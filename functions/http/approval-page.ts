import { createHash } from 'node:crypto';
import type { ApprovalView } from '../core/approvals/resume.js';
import { renderFormFields, type ResumeFormSchema } from './approval-form.js';
import { html, originOf, raw, safeHref, type Markup } from './html.js';
import { descriptionMarkup } from './render-all.js';
import { consoleBundle, type StaticAsset } from './console/static-assets.js';

/**
 * The approval page of a suspended flow step (spec 2.4-2.6), served at
 * `GET /approve/{workspace}/{jobId}/{resumeId}/{signature}`. A pure function of its model: the
 * route decides who may approve and what state the step is in; this file only shows it.
 *
 * The page loads nothing but its own script, the console's typed bundle approval-page.js (served
 * by svc itself), under a strict CSP that admits exactly that bundle and its inline style by hash.
 * Its URL carries the resume signature, so it never sends a Referer. The Approve button POSTs the
 * typed form values as JSON to `resumeUrl` (the body's data-resume-url) and shows the counts the
 * answer carries (ResumeOutcomeView); Cancel POSTs {reason} to data-cancel-url.
 */
export interface ApprovalPageModel extends Omit<ApprovalView, 'loginWouldHelp'> {
  workspace: string;
  /** Where the page POSTs: the resume URL (JSON body = the form values) and the cancel URL (JSON body {reason?}). */
  resumeUrl: string;
  cancelUrl: string | null;
  /** The logged-in viewer, if any. */
  viewer: string | null;
  /** Where to log in when blocked for lack of a session (a link is shown). */
  loginUrl?: string;
  /** The login page coming back here: a signed-in viewer may log in as someone else. */
  switchAccountUrl?: string;
}

const STATE_MESSAGES: Record<Exclude<ApprovalPageModel['state'], 'waiting'>, string> = {
  resumed: 'This step has been approved and the flow has resumed.',
  canceled: 'This approval was canceled: the flow does not resume from this step.',
  timed_out: 'This approval timed out before enough approvals arrived.',
  finished: 'The flow has already finished.',
};

export function renderApprovalPage(model: ApprovalPageModel): string {
  const interactive = model.state === 'waiting' && !model.blockedReason;
  const showCancel = interactive && !model.hideCancel && model.cancelUrl !== null;
  // The typed bundle (console/browser/approval-page.ts), only when there is something to do.
  const script = interactive ? consoleBundle('approval-page') : null;
  const cancelUrl = showCancel ? model.cancelUrl : null;
  const title = model.flowSummary || model.flowPath;
  const description = descriptionMarkup(model.description);

  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy(model, script)}">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>Approval: ${model.stepSummary || model.stepId} (${title})</title>
<style>${raw(APPROVAL_STYLE)}</style>
</head>
<body${script ? html` data-resume-url="${model.resumeUrl}"${cancelUrl ? html` data-cancel-url="${cancelUrl}"` : ''}` : ''}>
<main>
<header>
<p class="eyebrow">Approval requested</p>
<h1 id="flow-summary">${title}</h1>
<p class="path" id="flow-path">${model.workspace} / ${model.flowPath}</p>
</header>
<dl class="facts">
<dt>Step</dt><dd id="step">${model.stepSummary || model.stepId}${model.stepSummary ? html` <code>${model.stepId}</code>` : ''}</dd>
<dt>Triggered by</dt><dd id="triggered-by">${model.triggeredBy}</dd>
<dt>Approvals</dt><dd id="approvals"><span id="approvals-received">${Number(model.approvalsReceived)}</span> of <span id="approvals-required">${Number(model.approvalsRequired)}</span> received</dd>
<dt>You</dt><dd id="viewer">${model.viewer ? html`signed in as ${model.viewer}${switchAccount(model.switchAccountUrl)}` : 'not signed in'}</dd>
</dl>
${description ? html`<section class="description" id="description" aria-label="Description">\n${description}\n</section>` : ''}
<section class="decision" id="decision">
${renderDecision(model, interactive, showCancel)}
</section>
</main>${script ? html`\n<script src="${script.url}" integrity="sha256-${script.hash}"></script>` : ''}
</body>
</html>
`.toString();
}

function renderDecision(model: ApprovalPageModel, interactive: boolean, showCancel: boolean): Markup {
  if (model.state !== 'waiting') return html`<p class="state state-${model.state}" id="state" role="status">${STATE_MESSAGES[model.state]}</p>`;
  if (!interactive) {
    const login = safeHref(model.loginUrl);
    return html`<p class="blocked" id="blocked" role="alert">${model.blockedReason}</p>${login ? html`\n<p><a id="login" href="${login}">Log in</a></p>` : ''}`;
  }
  const schema: ResumeFormSchema | null = model.formSchema && typeof model.formSchema.properties === 'object' ? model.formSchema : null;
  const fields = schema ? renderFormFields(schema, model.defaultArgs ?? {}, model.enums ?? {}) : '';
  const cancel = showCancel
    ? html`\n<div class="cancel" id="cancel-area"><input type="text" id="cancel-reason" aria-label="Reason for canceling (optional)" placeholder="Reason (optional)"><button type="button" id="cancel" class="danger">Cancel</button></div>`
    : '';
  return html`<form id="approval-form">
${fields}
<div class="actions" id="actions"><button type="submit" id="approve">Approve</button></div>
</form>${cancel}
<p class="status" id="status" role="status" hidden></p>`;
}

function switchAccount(url: string | undefined): Markup | string {
  const href = safeHref(url);
  return href ? html` <a id="switch-account" href="${href}">Switch account</a>` : '';
}

function sha256(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/** Nothing loads from anywhere else; the only script is the page's bundle and the only style its own, by hash. */
function contentSecurityPolicy(model: ApprovalPageModel, script: StaticAsset | null): string {
  const targets = new Set(["'self'"]);
  for (const url of [model.resumeUrl, model.cancelUrl]) {
    const origin = originOf(url);
    if (origin) targets.add(origin);
  }
  return [
    "default-src 'none'",
    `script-src ${script ? `'sha256-${script.hash}'` : "'none'"}`,
    `style-src ${STYLE_HASH}`,
    'img-src data:',
    `connect-src ${[...targets].join(' ')}`,
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

/** Shared with the /approvals page, which shows the same forms and descriptions. */
export const APPROVAL_STYLE = `
:root { color-scheme: light; --fg: #1d2430; --muted: #5b6576; --line: #d9dee7; --accent: #2457c5; --bad: #b42318; --good: #067647; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: #f4f6f9; }
main { max-width: 760px; margin: 2rem auto; padding: 1.5rem 2rem; background: #fff; border: 1px solid var(--line); border-radius: 10px; }
.eyebrow { margin: 0; color: var(--muted); text-transform: uppercase; letter-spacing: .06em; font-size: .75rem; }
h1 { margin: .2rem 0; font-size: 1.5rem; }
.path { margin: 0 0 1rem; color: var(--muted); font-family: ui-monospace, monospace; font-size: .85rem; word-break: break-all; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; margin: 0 0 1.25rem; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; }
.description { border-top: 1px solid var(--line); padding-top: 1rem; }
.item { margin-bottom: 1rem; overflow-wrap: anywhere; }
.text { white-space: pre-wrap; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; }
th, td { border: 1px solid var(--line); padding: .3rem .6rem; text-align: left; vertical-align: top; }
th { background: #f0f3f8; }
pre { background: #f6f8fa; padding: .75rem; overflow-x: auto; border-radius: 6px; }
img { max-width: 100%; }
.invalid { color: var(--bad); }
.map-figure { margin: 0; }
.map { width: 100%; max-width: 480px; display: block; border: 1px solid var(--line); border-radius: 6px; }
.map-bg { fill: #e8f0e6; }
.map-center { stroke: var(--muted); stroke-width: 2; fill: none; }
.marker circle { fill: #d92d20; stroke: #fff; stroke-width: 2; }
.marker text { font-size: 12px; fill: var(--fg); }
.markers { padding-left: 1rem; margin: .4rem 0 0; list-style: none; }
.coords { font-family: ui-monospace, monospace; }
.decision { border-top: 1px solid var(--line); padding-top: 1rem; }
.field { margin-bottom: .9rem; display: flex; flex-direction: column; gap: .25rem; }
.field-boolean { flex-direction: row; flex-wrap: wrap; align-items: center; }
.field-boolean .hint { flex-basis: 100%; }
label { font-weight: 600; }
.hint { margin: 0; color: var(--muted); font-size: .85rem; }
.required { color: var(--bad); }
input, select, textarea { font: inherit; padding: .35rem .5rem; border: 1px solid #b8c0cc; border-radius: 6px; }
textarea.json { font-family: ui-monospace, monospace; }
button { font: inherit; padding: .45rem 1.2rem; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button.secondary { background: #fff; color: var(--bad); border-color: var(--bad); }
button.danger { background: var(--bad); border-color: var(--bad); color: #fff; }
button:disabled { opacity: .6; cursor: progress; }
.cancel { display: flex; gap: .5rem; margin-top: .75rem; }
.cancel input { flex: 1; }
.status { padding: .6rem .8rem; border-radius: 6px; }
.status.ok { background: #ecfdf3; color: var(--good); }
.status.error, .blocked { background: #fef3f2; color: var(--bad); padding: .6rem .8rem; border-radius: 6px; }
.state { background: #f0f3f8; padding: .6rem .8rem; border-radius: 6px; }
`;
const STYLE_HASH = sha256(APPROVAL_STYLE);
