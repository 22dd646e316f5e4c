import { Hono } from 'hono';
import { ApiError } from '../../core/common/errors.js';
import { listScripts, getScriptByPath, scriptHistory } from '../../core/scripts/scripts.js';
import { findLatestFlow, flowHistory, getFlow, listFlows } from '../../core/flows/flows.js';
import { lastRunOf } from '../../core/console/runs.js';
import type { CoreDeps } from '../../core/deps.js';
import type { Rights } from '../../core/identity/permissions.js';
import { html, type Markup } from '../html.js';
import { flowGraphSvg } from './flow-graph.js';
import { highlightSource } from './highlight.js';
import { hashOf, pageAccess, pageResponse, renderPage, notAvailable } from './layout.js';
import { homeSections } from './home-page.js';
import { formatTime } from './time-format.js';
import { languageName } from './language-names.js';
import { webhookSection } from './webhook-urls.js';
import { consoleBundle } from './static-assets.js';

/**
 * `/w/<ws>`: the workspace at a glance — scripts and flows the person may read, by folder, with
 * their last run's status; `/w/<ws>/item/<path>`: one script or flow with its source or graph,
 * input schema, a run form generated from the schema, its webhook URLs with copy-as-curl (a token
 * placeholder, never a token) and its recent runs.
 */

interface Item {
  path: string;
  kind: 'script' | 'flow';
  summary: string;
  language: string;
  last: string;
}

export function workspacePageRoutes(deps: CoreDeps) {
  const r = new Hono();

  r.get('/w/:workspace', async (c) => {
    const access = await pageAccess(deps, c);
    if (!access.ok) return access.response;
    const { rights, principal } = access;
    const [home, items] = await Promise.all([homeSections(deps, principal, rights), visibleItems(deps, rights)]);
    return pageResponse(c, renderPage({ title: rights.workspaceId, workspace: rights.workspaceId, username: principal.username, script: GLANCE_SCRIPT, data: {}, body: glanceBody(rights.workspaceId, home, items, { script: rights.can('scripts', 'write'), flow: rights.can('flows', 'write') }) }));
  });

  r.get('/w/:workspace/item/:path{.+}', async (c) => {
    const access = await pageAccess(deps, c);
    if (!access.ok) return access.response;
    const { rights, principal } = access;
    const path = c.req.param('path');
    const ws = rights.workspaceId;
    const origin = new URL(c.req.url).origin;
    // Looked up only for a caller who may read a flow there: to anyone else a flow answers as a script that is not theirs to read.
    const isFlow = rights.can('flows', 'read', path) && (await findLatestFlow(deps.store, ws, path)) !== null;
    try {
      const item = isFlow ? await flowItem(deps, rights, path) : await scriptItem(deps, rights, path);
      const body = itemBody(ws, origin, item, rights.can(isFlow ? 'flows' : 'scripts', 'write', path));
      return pageResponse(c, renderPage({ title: path, workspace: ws, username: principal.username, script: null, data: { path, kind: isFlow ? 'flow' : 'script', schema: JSON.stringify(item.schema ?? {}) }, body, libraries: [consoleBundle('item-page')] }));
    } catch (error) {
      if (!(error instanceof ApiError) || (error.status !== 403 && error.status !== 404)) throw error;
      return notAvailable(c, { workspace: ws, username: principal.username }, error.message, error.status);
    }
  });
  return r;
}

async function visibleItems(deps: CoreDeps, rights: Rights): Promise<Item[]> {
  const scripts = rights.can('scripts', 'read') ? await listScripts(deps.store, rights) : [];
  const flows = rights.can('flows', 'read') ? await listFlows(deps, rights) : [];
  const items: Item[] = [];
  for (const s of scripts) items.push({ path: s.path, kind: 'script', summary: s.summary ?? '', language: languageName(s.language), last: '' });
  for (const f of flows) {
    const flow = await findLatestFlow(deps.store, rights.workspaceId, f.path);
    items.push({ path: f.path, kind: 'flow', summary: flow?.summary ?? '', language: 'flow', last: '' });
  }
  // The last run of each path exactly, read as the run list reads (same rights).
  for (const item of items) item.last = (await lastRunOf(deps, rights, item.path))?.status ?? '';
  return items.sort((a, b) => a.path.localeCompare(b.path));
}

function folderOf(path: string): string {
  const [kind, owner] = path.split('/');
  return kind === 'f' ? `folder ${owner}` : `user ${owner}`;
}

function glanceBody(ws: string, home: Markup, items: Item[], canCreate: { script: boolean; flow: boolean }): Markup {
  const groups = new Map<string, Item[]>();
  for (const item of items) groups.set(folderOf(item.path), [...(groups.get(folderOf(item.path)) ?? []), item]);
  const sections = [...groups].map(
    ([folder, list]) => html`<h3>${folder}</h3><div class="table-wrap"><table><thead><tr><th scope="col">Path</th><th scope="col">Summary</th><th scope="col">Language</th><th scope="col">Last run</th></tr></thead><tbody>
${list.map((i) => html`<tr><td><a href="/w/${encodeURIComponent(ws)}/item/${i.path}">${i.path}</a></td><td>${i.summary}</td><td>${i.language}</td><td>${i.last ? html`<span class="status s-${i.last}">${i.last}</span>` : html`<span class="muted">never</span>`}</td></tr>`)}</tbody></table></div>`,
  );
  return html`<h1>Workspace ${ws}</h1>${home}<h2 id="items">Scripts and flows</h2>${canCreate.script || canCreate.flow ? html`<p>${canCreate.script ? html`<a href="/w/${encodeURIComponent(ws)}/scripts/new">New script</a>` : ''}${canCreate.script && canCreate.flow ? ' · ' : ''}${canCreate.flow ? html`<a href="/w/${encodeURIComponent(ws)}/flows/new">New flow</a>` : ''}</p>` : ''}${sections.length ? sections : html`<p>No scripts or flows you may see yet.</p>`}`;
}

interface ItemView {
  kind: 'script' | 'flow';
  path: string;
  summary: string;
  description: string;
  language: string;
  hash: string | null;
  /** The script's source, highlighted (null for a flow). */
  source: Markup | null;
  graph: Markup | null;
  schema: unknown;
  /** Newest first: a script version's hash or a flow version's number, when and by whom. */
  versions: { id: string; created_at: string; created_by: string; message: string }[];
}

async function scriptItem(deps: CoreDeps, rights: Rights, path: string): Promise<ItemView> {
  const s = await getScriptByPath(deps.store, rights, path);
  const versions = (await scriptHistory(deps.store, rights, path)).map((v) => ({ id: v.hash, created_at: v.created_at, created_by: v.created_by, message: v.deployment_message ?? v.summary }));
  return { kind: 'script', path, summary: s.summary, description: s.description, language: languageName(s.language), hash: s.hash, source: highlightSource(s.content, s.language), graph: null, schema: s.schema, versions };
}

async function flowItem(deps: CoreDeps, rights: Rights, path: string): Promise<ItemView> {
  const f = await getFlow(deps, rights, path);
  const versions = (await flowHistory(deps, rights, path)).slice(0, 20).map((v) => ({ id: String(v.id), created_at: v.created_at, created_by: v.created_by, message: v.deployment_message ?? v.summary }));
  return { kind: 'flow', path, summary: f.summary, description: f.description, language: 'flow', hash: null, source: null, graph: flowGraphSvg(f.value.modules, () => 'none', { failureModule: f.value.failure_module }), schema: f.schema, versions };
}

function itemBody(ws: string, origin: string, item: ItemView, canEdit: boolean): Markup {
  const pinnedId = (item.kind === 'flow' ? item.versions[0]?.id : item.hash) ?? null;
  return html`<h1><span class="muted">${item.kind}</span> ${item.path}</h1>
<p>${item.summary}</p>${canEdit ? html`<p><a href="/w/${encodeURIComponent(ws)}/${item.kind}s/edit/${item.path}">Edit this ${item.kind}</a></p>` : ''}${item.description ? html`<p class="muted">${item.description}</p>` : ''}
<h2>Run</h2><form id="run-form" aria-label="Run ${item.path}"><div id="run-fields"></div><button type="submit">Run</button></form><p id="message" role="alert"></p>
${item.graph ? html`<h2>Graph</h2><div class="graph">${item.graph}</div>` : ''}
${item.source !== null ? html`<h2>Source <span class="muted">(${item.language})</span></h2><pre><code id="source" class="hljs">${item.source}</code></pre>` : ''}
<h2>Versions</h2><div class="table-wrap"><table id="versions" aria-label="Versions, newest first"><thead><tr><th scope="col">${item.kind === 'flow' ? 'Version' : 'Hash'}</th><th scope="col">Created</th><th scope="col">By</th><th scope="col" class="wide">Message</th></tr></thead><tbody>
${item.versions.map((v) => html`<tr><td><code>${v.id}</code></td><td>${formatTime(v.created_at)}</td><td>${v.created_by}</td><td class="wide">${v.message}</td></tr>`)}</tbody></table></div>
<h2>Input schema</h2><pre>${JSON.stringify(item.schema ?? {}, null, 2)}</pre>
${webhookSection(origin, ws, item.kind, item.path, pinnedId)}
<h2>Recent runs</h2><ul id="recent"><li class="muted">loading…</li></ul>`;
}

const GLANCE_TEXT = '';
const GLANCE_SCRIPT = { text: GLANCE_TEXT, hash: hashOf(GLANCE_TEXT) };
