import type { CoreDeps } from '../core/deps.js';
import { html } from './html.js';
import { bundledPage, workspacePageRoute } from './page-shell.js';
import { consoleBundle } from './console/static-assets.js';

/**
 * `/w/<workspace>/openapi` (issue 21, spec 4.10): pick the routes and webhooks an OpenAPI 3.1
 * document covers, preview it and download it. A static shell like the settings page: its script,
 * the typed bundle console/browser/openapi-page.ts, asks `POST /api/w/<ws>/openapi/generate` with
 * the session cookie, so the API's filters, checks and read rights are the page's too, and its
 * refusals are shown as they come.
 */

const STYLE = [
  'body{font-family:system-ui,sans-serif;max-width:64rem;margin:2rem auto;padding:0 1rem}',
  'fieldset{margin:1rem 0;border:1px solid #ccc}label{display:block;font-size:.9em;margin-top:.5rem}',
  'input,select{padding:.35rem;box-sizing:border-box}.wide{width:100%}button{padding:.4rem .9rem;margin-top:.5rem}',
  '.filter{display:flex;gap:.5rem;align-items:center;margin:.4rem 0}.filter input{flex:1}',
  'pre{background:#f5f5f5;padding:1rem;overflow:auto;max-height:30rem;font-size:.85em}#message{color:#b00020}',
].join('');
export function renderOpenApiPage(workspaceId: string, username: string): string {
  return bundledPage(consoleBundle('openapi-page'), STYLE)(
    `OpenAPI document of ${workspaceId} — svc`,
    html`<body data-workspace="${workspaceId}"><h1>OpenAPI document: ${workspaceId}</h1><p>Signed in as <strong>${username}</strong>. The document lists only the routes, scripts and flows you may read.</p>
<form id="openapi-form">
<fieldset><legend>Document</legend>
<label for="title">Title</label><input id="title" name="title" class="wide" maxlength="200" placeholder="svc workspace ${workspaceId}">
<label for="version">Version</label><input id="version" name="version" class="wide" maxlength="100" placeholder="1.0.0">
<label for="url">Server URL (left empty: this service's public URL)</label><input id="url" name="url" class="wide" type="url" maxlength="2048" placeholder="https://svc.example.com">
<label for="format">Format</label><select id="format" name="format"><option value="json">JSON</option><option value="yaml">YAML</option></select>
</fieldset>
<fieldset><legend>HTTP routes</legend>
<p>Regular expressions (RE2) matched against the whole folder name, item path (after <code>f/&lt;folder&gt;/</code>) and route path; <code>*</code> alone matches anything.</p>
<div id="route-filters"></div><button type="button" id="add-route-filter">Add route filter</button>
</fieldset>
<fieldset><legend>Webhooks of scripts and flows</legend>
<p>Which items (<code>u/&lt;user&gt;/…</code>, <code>f/&lt;folder&gt;/…</code> or either), a regular expression for the user or folder name and one for the rest of the path.</p>
<div id="webhook-filters"></div><button type="button" id="add-webhook-filter">Add webhook filter</button>
</fieldset>
<button type="submit">Generate</button> <button type="button" id="download">Download</button>
</form>
<p id="message" role="alert"></p>
<pre id="preview" aria-label="Document"></pre>
<template id="route-filter"><div class="filter">
<input name="folder_regex" data-label="Folder regex" maxlength="500"><input name="path_regex" data-label="Item path regex" maxlength="500"><input name="route_path_regex" data-label="Route path regex" maxlength="500">
<button type="button" class="remove">Remove</button></div></template>
<template id="webhook-filter"><div class="filter">
<select name="runnable_kind" data-label="Kind"><option value="script">script</option><option value="flow">flow</option></select>
<select name="user_or_folder_regex" data-label="Owner"><option value="*">u/ or f/</option><option value="u">u/ (a user)</option><option value="f">f/ (a folder)</option></select>
<input name="user_or_folder_regex_value" data-label="User or folder regex" maxlength="500"><input name="path" data-label="Webhook path regex" maxlength="500">
<button type="button" class="remove">Remove</button></div></template>`,
  );
}

export function openApiPageRoutes(deps: CoreDeps) {
  return workspacePageRoute(deps, '/w/:workspace/openapi', renderOpenApiPage);
}
