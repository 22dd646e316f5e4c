import { createHash } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { authenticate, type Principal } from '../core/identity/auth.js';
import { Rights } from '../core/identity/permissions.js';
import type { CoreDeps } from '../core/deps.js';
import { ApiError } from '../core/common/errors.js';
import { sessionOf } from './session-cookie.js';
import { requireWorkspace } from '../core/workspace/workspaces.js';
import { html, raw, type Markup } from './html.js';
import type { StaticAsset } from './console/static-assets.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64');

/**
 * The shell of a page outside the console's layout (login, tokens, settings, OpenAPI): its one script and style, the only
 * ones its Content-Security-Policy allows (by hash), and nothing else the page may load but calls to
 * this site. `body` is the page's `<body …>` element without its closing tag.
 */
function pageShell(script: { hash: string; tag: Markup }, style: string): (title: string, body: Markup) => string {
  const csp = `default-src 'none'; script-src 'sha256-${script.hash}'; style-src 'sha256-${sha256(style)}'; connect-src 'self'; form-action 'none'; base-uri 'none'`;
  return (title, body) => html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${raw(csp)}">
<meta name="referrer" content="no-referrer">
<title>${title}</title><style>${raw(style)}</style></head>
${body}
${script.tag}</body></html>`.toString();
}

/** A page whose script is inline: the pages that run none (their script is empty, its hash still named). */
export function staticPage(script: string, style: string): (title: string, body: Markup) => string {
  return pageShell({ hash: sha256(script), tag: html`<script>${raw(script)}</script>` }, style);
}

/**
 * A page whose script is one of the console's typed bundles (console/static-assets.ts): loaded by
 * its URL with its hash as `integrity`, and that hash the only script the CSP allows.
 */
export function bundledPage(bundle: StaticAsset, style: string): (title: string, body: Markup) => string {
  return pageShell({ hash: bundle.hash, tag: html`<script src="${bundle.url}" integrity="sha256-${bundle.hash}"></script>` }, style);
}

/**
 * Who is signed in for a page, or null when nobody is (the page then sends to the login). A page is
 * for a person: only a login session opens it, never a token in the URL.
 */
export async function signedInUsername(deps: CoreDeps, c: Context): Promise<string | null> {
  return (await signedIn(deps, c))?.username ?? null;
}

async function signedIn(deps: CoreDeps, c: Context): Promise<Principal | null> {
  const session = sessionOf(c);
  try {
    return await authenticate(deps, { bearer: null, session });
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 401) throw error;
    return null;
  }
}

/**
 * The route of a workspace's static page (`/w/<workspace>/<page>`): a person signed in gets the
 * page of the workspace, if it exists; anyone else is sent to the login and back.
 */
export function workspacePageRoute(deps: CoreDeps, path: `/w/:workspace/${string}`, render: (workspaceId: string, username: string) => string) {
  const r = new Hono();
  r.get(path, async (c) => {
    const principal = await signedIn(deps, c);
    if (principal === null) return c.redirect(`/login?next=${encodeURIComponent(c.req.path)}`, 302);
    // Who asks before what exists: a workspace one may not enter answers the same whether it exists or not.
    const rights = await Rights.load(deps, principal, c.req.param('workspace'));
    if (!rights.entersWorkspace()) throw rights.workspaceDenial();
    const ws = await requireWorkspace(deps.store, c.req.param('workspace'));
    return c.html(render(ws.id, principal.username), 200, { 'cache-control': 'no-store' });
  });
  return r;
}
