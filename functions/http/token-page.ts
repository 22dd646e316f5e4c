import { Hono } from 'hono';
import type { CoreDeps } from '../core/deps.js';
import { html } from './html.js';
import { bundledPage, signedInUsername } from './page-shell.js';
import { consoleBundle } from './console/static-assets.js';

/**
 * The token page (`/tokens`, spec 2.8, 5.2, 5.8): a logged-in user's API tokens with colour-coded
 * expiry badges, a form to create one (its value shown once) and a delete button per token. The
 * page is a static shell; its script, the typed bundle console/browser/token-page.ts, reads and
 * changes tokens through the same API a client uses (`/api/users/tokens/...`, with the session
 * cookie), and the badge each token gets is the core's (`expiry_badge`), which the page only colours.
 */

const STYLE = [
  'body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}',
  'table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid #ddd}',
  '.mono,code{font-family:ui-monospace,monospace}',
  '.badge{display:inline-block;padding:.1rem .5rem;border-radius:1rem;font-size:.85em;white-space:nowrap}',
  '.badge-expired{background:#fde2e1;color:#8a1c13}.badge-week{background:#ffe6cc;color:#8a4b00}.badge-month{background:#fff6c2;color:#6b5900}',
  'form{margin:1.5rem 0;display:grid;grid-template-columns:repeat(auto-fit,minmax(12rem,1fr));gap:.5rem;align-items:end}',
  'label{display:block;font-size:.9em}input{width:100%;padding:.4rem;box-sizing:border-box}button{padding:.4rem .9rem}',
  '#created{background:#eef7ee;padding:.75rem;border-radius:.4rem}#message{color:#b00020}',
].join('');

export function renderTokenPage(username: string): string {
  return bundledPage(consoleBundle('token-page'), STYLE)(
    'API tokens — svc',
    html`<body><h1>API tokens</h1><p>Signed in as <strong>${username}</strong>. A token acts as you, narrowed by its scopes and workspace.</p>
<form id="create">
<div><label for="label">Label</label><input id="label" name="label" required maxlength="200"></div>
<div><label for="expiration">Expires (optional)</label><input id="expiration" name="expiration" type="date"></div>
<div><label for="scopes">Scopes (optional, e.g. jobs:run:f/ops/*)</label><input id="scopes" name="scopes"></div>
<div><button type="submit">Create token</button></div>
</form>
<div id="created" hidden role="status"><p>Your new token — copy it now, it is not shown again:</p><code id="new-token"></code></div>
<p id="message" role="alert"></p>
<table><thead><tr><th>Label</th><th>Token</th><th>Scopes</th><th>Workspace</th><th>Expires</th><th>Expiry</th><th></th></tr></thead>
<tbody id="rows"></tbody></table><p id="empty" hidden>No tokens yet.</p>`,
  );
}

export function tokenPageRoutes(deps: CoreDeps) {
  const r = new Hono();
  r.get('/tokens', async (c) => {
    const username = await signedInUsername(deps, c);
    if (username === null) return c.redirect('/login?next=/tokens', 302);
    return c.html(renderTokenPage(username), 200, { 'cache-control': 'no-store' });
  });
  return r;
}
