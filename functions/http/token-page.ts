import { Hono } from 'hono';
import type { CoreDeps } from '../core/deps.js';
import { html } from './html.js';
import { signedInUsername, staticPage } from './page-shell.js';

/**
 * The token page (`/tokens`, spec 2.8, 5.2, 5.8): a logged-in user's API tokens with colour-coded
 * expiry badges, a form to create one (its value shown once) and a delete button per token. The
 * page is a static shell; its script reads and changes tokens through the same API a client uses
 * (`/api/users/tokens/...`, with the session cookie), and the badge each token gets is the core's
 * (`expiry_badge`), which the page only colours.
 */

const SCRIPT = `
const rows = document.getElementById('rows');
const form = document.getElementById('create');
const created = document.getElementById('created');
const message = document.getElementById('message');
const BADGES = { expired: ['expired', 'badge-expired'], within_7_days: ['expires within 7 days', 'badge-week'], within_30_days: ['expires within 30 days', 'badge-month'] };

function cell(text, className) {
  const td = document.createElement('td');
  if (className) td.className = className;
  td.textContent = text;
  return td;
}

async function api(path, init) {
  const res = await fetch(path, { credentials: 'same-origin', ...init });
  if (res.status === 401) location.assign('/login?next=/tokens');
  if (!res.ok) {
    const answer = await res.json().catch(() => null);
    throw new Error(answer?.error?.message ?? 'request failed (' + res.status + ')');
  }
  return res;
}

async function load() {
  const tokens = await (await api('/api/users/tokens/list')).json();
  rows.replaceChildren(...tokens.map((t) => {
    const tr = document.createElement('tr');
    tr.dataset.prefix = t.token_prefix;
    tr.append(cell(t.label), cell(t.token_prefix + '…', 'mono'), cell(t.scopes ? t.scopes.join(' ') : 'all of yours'), cell(t.workspace_id ?? 'any'), cell(t.expiration ? t.expiration.slice(0, 10) : 'never'));
    const badge = cell('');
    if (t.expiry_badge) {
      const [text, className] = BADGES[t.expiry_badge];
      const span = document.createElement('span');
      span.className = 'badge ' + className;
      span.textContent = text;
      badge.append(span);
    }
    const actions = cell('');
    const remove = document.createElement('button');
    remove.type = 'button';
    remove.textContent = 'Delete';
    remove.addEventListener('click', async () => {
      if (!confirm('Delete the token "' + t.label + '"? Whatever uses it stops working at once.')) return;
      await run(() => api('/api/users/tokens/delete/' + encodeURIComponent(t.token_prefix), { method: 'DELETE' }));
      await load();
    });
    actions.append(remove);
    tr.append(badge, actions);
    return tr;
  }));
  document.getElementById('empty').hidden = tokens.length > 0;
}

async function run(action) {
  message.textContent = '';
  try {
    return await action();
  } catch (error) {
    message.textContent = error.message;
    throw error;
  }
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const scopes = form.scopes.value.split(/[\\s,]+/).filter(Boolean);
  const body = { label: form.label.value };
  if (form.expiration.value) body.expiration = new Date(form.expiration.value + 'T23:59:59Z').toISOString();
  if (scopes.length) body.scopes = scopes;
  const res = await run(() => api('/api/users/tokens/create', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }));
  document.getElementById('new-token').textContent = await res.text();
  created.hidden = false;
  form.reset();
  await load();
});

load().catch((error) => (message.textContent = error.message));
`;
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
const PAGE = staticPage(SCRIPT, STYLE);

export function renderTokenPage(username: string): string {
  return PAGE(
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
