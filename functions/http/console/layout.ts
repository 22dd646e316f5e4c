import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import { authenticate, type Principal } from '../../core/identity/auth.js';
import { ApiError } from '../../core/common/errors.js';
import { Rights } from '../../core/identity/permissions.js';
import { sessionOf } from '../session-cookie.js';
import { requireWorkspace } from '../../core/workspace/workspaces.js';
import type { CoreDeps } from '../../core/deps.js';
import { html, raw, type Markup } from '../html.js';
import { HIGHLIGHT_STYLE } from './highlight.js';

/**
 * What every console page shares: the login check, the frame (navigation, style) and a strict CSP
 * that allows exactly the page's own script and the shared style by their hashes. Pages are
 * static shells plus what the server knows; their scripts read and act through the API with the
 * session cookie, so a page can never show or do more than the API allows its user.
 */

export const CONSOLE_STYLE = [
  ':root{color-scheme:light;font-family:system-ui,sans-serif;--ok:#1b5e20;--bad:#b00020;--wait:#8a5a00;--run:#0d47a1;--muted:#555}',
  'body{margin:0}main{max-width:80rem;margin:0 auto;padding:1rem}',
  'nav{display:flex;flex-wrap:wrap;gap:.25rem 1rem;align-items:center;padding:.6rem 1rem;background:#20232a;color:#fff}nav a{color:#fff}nav form{margin:0}nav form button{padding:.15rem .6rem}',
  'a{color:#0b57d0}a:focus,button:focus,input:focus,select:focus,textarea:focus,summary:focus{outline:3px solid #f9ab00;outline-offset:1px}',
  'h1{font-size:1.4rem;word-break:break-all}h2{font-size:1.1rem}',
  'table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #ddd;font-size:.9em;vertical-align:top}',
  '.table-wrap{overflow-x:auto}',
  'form.filters{display:grid;grid-template-columns:repeat(auto-fill,minmax(11rem,1fr));gap:.5rem;align-items:end;margin-bottom:1rem}',
  'label{display:block;font-size:.85em}input,select,textarea{width:100%;box-sizing:border-box;padding:.35rem;font:inherit}textarea{min-height:5rem;font-family:ui-monospace,monospace}',
  'input[type=checkbox]{width:auto}button{padding:.4rem .8rem;font:inherit;cursor:pointer}button.danger{background:var(--bad);border:1px solid var(--bad);color:#fff}',
  '.status{display:inline-block;padding:.05rem .45rem;border-radius:.6rem;font-size:.85em;border:1px solid currentColor}',
  '.s-success{color:var(--ok)}.s-failed{color:var(--bad)}.s-canceled{color:var(--muted)}.s-running{color:var(--run)}.s-queued{color:var(--muted)}.s-suspended,.s-awaiting_approval{color:var(--wait)}.s-pending{color:#999}',
  '.toolbar{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:.5rem 0}',
  'form.inline{display:flex;flex-wrap:wrap;gap:.4rem;align-items:end;margin:.2rem 0}form.inline input,form.inline select{width:auto}',
  'nav.tabs{background:none;color:inherit;padding:.2rem 0;border-bottom:1px solid #ddd}nav.tabs a{color:#0b57d0}',
  'pre{background:#f6f8fa;padding:.6rem;overflow:auto;max-height:30rem;white-space:pre-wrap;word-break:break-word}',
  'pre.logs{background:#111;color:#eee}',
  // ansi_up's classes (use_classes): the 16 terminal colours, readable on the dark log background.
  '.ansi-black-fg{color:#666}.ansi-red-fg{color:#ff6b6b}.ansi-green-fg{color:#69db7c}.ansi-yellow-fg{color:#ffd43b}.ansi-blue-fg{color:#74c0fc}.ansi-magenta-fg{color:#e599f7}.ansi-cyan-fg{color:#66d9e8}.ansi-white-fg{color:#f1f3f5}',
  '.ansi-bright-black-fg{color:#999}.ansi-bright-red-fg{color:#ffa8a8}.ansi-bright-green-fg{color:#b2f2bb}.ansi-bright-yellow-fg{color:#ffec99}.ansi-bright-blue-fg{color:#a5d8ff}.ansi-bright-magenta-fg{color:#eebefa}.ansi-bright-cyan-fg{color:#99e9f2}.ansi-bright-white-fg{color:#fff}',
  '.ansi-red-bg{background:#c92a2a}.ansi-green-bg{background:#2b8a3e}.ansi-yellow-bg{background:#e67700}.ansi-blue-bg{background:#1864ab}.ansi-bold{font-weight:700}',
  'dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}dl.facts dt{font-weight:600}dl.facts dd{margin:0;word-break:break-all}',
  '.json details{margin-left:1rem}.json summary{cursor:pointer}.json .k{color:#6f42c1}.json .str{color:#0a7d32}.json .num{color:#0b57d0}',
  '#message{color:var(--bad)}.muted{color:var(--muted)}figure.chart{margin:0 0 1rem;overflow-x:auto}figure.chart figcaption{font-size:.85em}',
  '.graph svg{max-width:100%;height:auto}.graph .node rect{fill:#fff;stroke:#888}.graph .node.s-success rect{stroke:var(--ok);fill:#e8f5e9}.graph .node.s-failed rect{stroke:var(--bad);fill:#fde7e9}.graph .node.s-running rect{stroke:var(--run);fill:#e3f2fd}.graph .node.s-suspended rect,.graph .node.s-awaiting_approval rect{stroke:var(--wait);fill:#fff8e1}.graph text{font-size:12px}.graph .edge{stroke:#888;fill:none}',
  '.graph .node.s-timed_out rect{stroke:var(--bad);fill:#fde7e9}.graph .node.s-retrying rect{stroke:var(--wait);fill:#fff8e1}.graph .node.s-skipped rect,.graph .node.s-not_needed rect,.graph .node.s-not_run rect{stroke-dasharray:4 3;fill:#f6f6f6}.graph .node.failure rect{stroke-dasharray:2 2}.graph text.set{font-size:10px;fill:#555}.graph text.notes{font-size:10px;font-weight:bold}',
  '.s-timed_out{color:var(--bad)}.s-retrying{color:var(--wait)}.s-skipped,.s-not_needed,.s-not_run{color:var(--muted)}.s-cache_hit{color:var(--run)}',
  HIGHLIGHT_STYLE,
  // A run's step inspector beside its graph on a wide screen, under it on a narrow one.
  '.split{display:grid;grid-template-columns:minmax(0,1fr);gap:1rem;align-items:start}',
  '@media (min-width:1000px){.split:has(> #step:not([hidden])){grid-template-columns:minmax(0,3fr) minmax(0,2fr)}.split > #step{position:sticky;top:0;max-height:100vh;overflow:auto}}',
  '@media (max-width:600px){th.wide,td.wide{display:none}main{padding:.5rem}}',
].join('');
const STYLE_HASH = hashOf(CONSOLE_STYLE);

export function hashOf(text: string): string {
  return createHash('sha256').update(text).digest('base64');
}

export interface PageFrame {
  title: string;
  workspace: string;
  username: string;
  /** The page's static script and its hash (computed once, at module load); none when a bundle (libraries) is its script. */
  script: { text: string; hash: string } | null;
  /** data-* attributes of <body>: what the script needs to know (escaped like any value). */
  data: Record<string, string>;
  body: Markup;
  /** Library scripts loaded before the page's own (static-assets.ts), each allowed by its hash. */
  libraries?: { url: string; hash: string }[];
  /** A library's style sheet, inline after the console's, allowed by its own hash. */
  libraryStyle?: string;
  /**
   * A nonce, new for each response, for the <style> elements a library's script writes (CodeMirror
   * does); the page's script finds it in `data-style-nonce`.
   */
  styleNonce?: string;
}

export function renderPage(p: PageFrame): string {
  const ws = encodeURIComponent(p.workspace);
  const libraries = p.libraries ?? [];
  // A hash source allows an external script whose integrity attribute carries that hash (CSP 3).
  const scriptSources = [...(p.script ? [p.script.hash] : []), ...libraries.map((l) => l.hash)].map((h) => `'sha256-${h}'`).join(' ');
  const styleSources = [...[STYLE_HASH, ...(p.libraryStyle ? [hashOf(p.libraryStyle)] : [])].map((h) => `'sha256-${h}'`), ...(p.styleNonce ? [`'nonce-${p.styleNonce}'`] : [])].join(' ');
  const data = Object.entries({ ...p.data, ...(p.styleNonce ? { 'style-nonce': p.styleNonce } : {}) }).map(([k, v]) => html` data-${raw(k)}="${v}"`);
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src ${scriptSources}; style-src ${styleSources}; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'">
<meta name="referrer" content="no-referrer"><link rel="icon" href="data:,">
<title>${p.title} — svc</title><style>${raw(CONSOLE_STYLE)}</style>${p.libraryStyle ? html`<style>${raw(p.libraryStyle)}</style>` : ''}</head>
<body data-workspace="${p.workspace}"${data}>
<nav aria-label="Console"><strong>svc</strong><a href="/w/${ws}">${p.workspace}</a><a href="/w/${ws}/runs">Runs</a><a href="/w/${ws}/schedules">Schedules</a><a href="/w/${ws}/variables">Variables</a><a href="/w/${ws}/resources">Connections</a><a href="/w/${ws}/folders">Folders</a><a href="/approvals">Approvals</a><a href="/w/${ws}/settings">Settings</a><span class="muted">${p.username}</span><form method="post" action="/api/auth/logout"><button type="submit">Log out</button></form></nav>
<main>${p.body}</main>
${libraries.map((l) => html`<script src="${l.url}" integrity="sha256-${l.hash}"></script>`)}${p.script ? html`<script>${raw(p.script.text)}</script>` : ''}</body></html>`.toString();
}

export type PageAccess = { ok: true; principal: Principal; rights: Rights } | { ok: false; response: Response };

/**
 * A page is for a person: only a login session opens it (never a token in the URL); without one
 * the browser goes to the login page and comes back.
 */
export async function pageAccess(deps: CoreDeps, c: Context): Promise<PageAccess> {
  const session = sessionOf(c);
  let principal: Principal;
  try {
    principal = await authenticate(deps, { bearer: null, session });
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 401) throw error;
    const next = c.req.path + (new URL(c.req.url).search ?? '');
    return { ok: false, response: c.redirect(`/login?next=${encodeURIComponent(next)}`, 302) };
  }
  const id = c.req.param('workspace') ?? '';
  // Who asks before what exists: a workspace one may not enter answers the same whether it exists or not.
  const rights = await Rights.load(deps, principal, id);
  if (!rights.entersWorkspace()) throw rights.workspaceDenial();
  await requireWorkspace(deps.store, id);
  return { ok: true, principal, rights };
}

export function pageResponse(c: Context, page: string, status: 200 | 403 | 404 = 200): Response {
  return c.html(page, status, { 'cache-control': 'no-store' });
}

const NO_SCRIPT = { text: '', hash: hashOf('') };

/**
 * The answer to a page the core refuses this person (403) or that names nothing there is (404):
 * why, in the console's frame, with the status the API would give. `before` is what the page keeps
 * above it (a settings page's tabs).
 */
export function notAvailable(c: Context, who: { workspace: string; username: string }, message: string, status: 403 | 404, before: Markup | string = ''): Response {
  return pageResponse(c, renderPage({ title: 'Not available', workspace: who.workspace, username: who.username, script: NO_SCRIPT, data: {}, body: html`${before}<h1>Not available</h1><p>${message}</p>` }), status);
}
