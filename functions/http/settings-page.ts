import type { CoreDeps } from '../core/deps.js';
import { html } from './html.js';
import { bundledPage, workspacePageRoute } from './page-shell.js';
import { chatTabPanel } from './settings-chat-tab.js';
import { consoleBundle } from './console/static-assets.js';

/**
 * The workspace settings page (`/w/<workspace>/settings`, spec 6.1): tab Webhooks, field "URL to
 * send requests to", an optional signing secret, and the delivery log with a redeliver button per
 * event; tab Chat, the workspace's chat connections (settings-chat-tab.ts). A static shell like the token page: its script, the typed bundle
 * console/browser/settings-page.ts, reads and changes the settings through the API
 * (`/api/w/<ws>/workspaces/...`, with the session cookie), so the API's rights apply unchanged.
 */

const STYLE = [
  'body{font-family:system-ui,sans-serif;max-width:64rem;margin:2rem auto;padding:0 1rem}',
  '[role=tablist]{display:flex;gap:.25rem;border-bottom:1px solid #ccc;margin-bottom:1rem}',
  '[role=tab]{border:1px solid #ccc;border-bottom:none;background:#f5f5f5;padding:.4rem .9rem}[role=tab][aria-selected=true]{background:#fff;font-weight:600}',
  'table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #ddd;font-size:.9em}',
  'label{display:block;font-size:.9em;margin-top:.5rem}input{width:100%;padding:.4rem;box-sizing:border-box}button{padding:.4rem .9rem;margin-top:.5rem}',
  '#message{color:#b00020}#saved{color:#1b5e20}',
].join('');

export function renderSettingsPage(workspaceId: string, username: string): string {
  return bundledPage(consoleBundle('settings-page'), STYLE)(
    `Settings of ${workspaceId} — svc`,
    html`<body data-workspace="${workspaceId}"><h1>Workspace settings: ${workspaceId}</h1><p>Signed in as <strong>${username}</strong>.</p>
<div role="tablist"><button type="button" role="tab" id="tab-general" aria-controls="panel-general" aria-selected="false">General</button><button type="button" role="tab" id="tab-webhooks" aria-controls="panel-webhooks" aria-selected="true">Webhooks</button><button type="button" role="tab" id="tab-chat" aria-controls="panel-chat" aria-selected="false">Chat</button></div>
<section id="panel-general" role="tabpanel" aria-labelledby="tab-general" hidden><p>Workspace <code>${workspaceId}</code>.</p></section>
<section id="panel-webhooks" role="tabpanel" aria-labelledby="tab-webhooks">
<p>Every change to a script, flow, app, connection, connection type, variable or folder, and every token nearing or past its expiry, is sent to this URL as a CloudEvent.</p>
<form id="webhook-form">
<label for="webhook">URL to send requests to</label><input id="webhook" name="webhook" type="url" placeholder="https://example.com/svc-events" maxlength="2048">
<label for="secret">Signing secret (optional, whsec_…; left empty keeps the current one for the same URL)</label><input id="secret" name="secret" type="password" autocomplete="off">
<button type="submit">Save</button> <span id="saved" hidden role="status">Saved.</span>
</form>
<p id="signed"></p>
<h2>Deliveries</h2><button type="button" id="refresh">Refresh</button>
<table><thead><tr><th>Time</th><th>Event</th><th>Item</th><th>Status</th><th>Attempts</th><th>Last answer</th><th>Next attempt</th><th></th></tr></thead>
<tbody id="deliveries"></tbody></table><p id="no-deliveries" hidden>No events sent yet.</p>
</section>
${chatTabPanel()}
<p id="message" role="alert"></p>`,
  );
}

export function settingsPageRoutes(deps: CoreDeps) {
  return workspacePageRoute(deps, '/w/:workspace/settings', renderSettingsPage);
}
