import { randomBytes } from 'node:crypto';
import { Hono, type Context } from 'hono';
import type YAML from 'yaml';
import { onFirstUse, requireHere } from '../../core/common/on-first-use.js';
import { ApiError } from '../../core/common/errors.js';
import { flowHistory, getFlow } from '../../core/flows/flows.js';
import type { CoreDeps } from '../../core/deps.js';
import { html, type Markup } from '../html.js';
import { pageAccess, pageResponse, renderPage, type PageAccess, notAvailable } from './layout.js';
import { formatTime } from './time-format.js';
import { consoleBundle, editorScript } from './static-assets.js';
import { webhookSection } from './webhook-urls.js';
import { NEW_FLOW, STEP_TEMPLATES } from './flow-templates.js';

/** Loaded with the first YAML written (on-first-use.ts). */
const yaml = onFirstUse(() => (typeof require === 'function' ? require('yaml') : requireHere('yaml')) as typeof YAML);

/**
 * `/w/<ws>/flows/new` and `/w/<ws>/flows/edit/<path>`: the flow editor. The flow is its YAML (the
 * create's body without the path: summary, description, value, schema) in CodeMirror beside the
 * flow graph drawn from it; steps are added, removed and reordered on the graph and edited in a
 * panel, each change written back into the YAML, and the YAML checked by `flows/validate` as it
 * changes, errors pointing at their step. A test run runs the flow in the editor without saving it
 * (`jobs/run/preview_flow`); a save is a new version, and the saved version runs from here too.
 *
 * The page is markup only: its script is two bundles, the editor (browser/flow-editor.ts:
 * CodeMirror, yaml, the graph) and the page's own (browser/flow-editor-page.ts), allowed by their
 * hashes and nothing inline.
 */

/** The page's own style (allowed by its hash); CodeMirror's theme comes with the page's nonce. */
const FLOW_EDITOR_STYLE = [
  '.flow-grid{display:grid;grid-template-columns:minmax(0,1fr);gap:1rem}',
  '@media (min-width:64rem){.flow-grid{grid-template-columns:minmax(0,1fr) minmax(0,1fr)}}',
  '.code-editor .cm-editor{border:1px solid #888;min-height:20rem;max-height:75vh;font-size:.85rem}.code-editor .cm-scroller{font-family:ui-monospace,monospace}',
  '.code-editor .cm-editor.cm-focused{outline:3px solid #f9ab00;outline-offset:1px}#yaml-text{min-height:20rem}',
  '.editor-graph .node[data-step]{cursor:pointer}.editor-graph .node[data-step]:focus{outline:none}.editor-graph .node[data-step]:focus rect{stroke:#f9ab00;stroke-width:3}',
  '.editor-graph .node.selected rect{stroke:var(--run);stroke-width:3;fill:#e3f2fd}.editor-graph .node.invalid rect{stroke:var(--bad);stroke-width:2;fill:#fde7e9}',
  '#step-panel fieldset{border:1px solid #ddd;margin:.5rem 0;min-width:0}.step-fields{display:grid;grid-template-columns:repeat(auto-fill,minmax(10rem,1fr));gap:.5rem;align-items:end}',
  '.transform-row{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr) minmax(0,2fr) auto;gap:.3rem;align-items:end;margin-bottom:.3rem}',
  '#problems li{margin:.3rem 0}#problems li.bad{color:var(--bad)}#step-panel textarea{min-height:8rem}',
].join('');

interface FlowEditorView {
  mode: 'new' | 'edit';
  path: string;
  yaml: string;
  versions: { id: number; created_at: string; created_by: string; message: string }[];
  saved: number | null;
}

export function flowEditorRoutes(deps: CoreDeps) {
  const r = new Hono();

  r.get('/w/:workspace/flows/new', async (c) => {
    const access = await pageAccess(deps, c);
    if (!access.ok) return access.response;
    if (!access.rights.can('flows', 'write')) return notAvailable(c, who(access), 'You may not create flows in this workspace.', 403);
    const path = c.req.query('path') ?? `u/${access.principal.username}/`;
    return editorResponse(c, access, { mode: 'new', path, yaml: yaml.stringify(NEW_FLOW), versions: [], saved: null });
  });

  r.get('/w/:workspace/flows/edit/:path{.+}', async (c) => {
    const access = await pageAccess(deps, c);
    if (!access.ok) return access.response;
    const { rights } = access;
    const path = c.req.param('path');
    let flow: Awaited<ReturnType<typeof getFlow>>;
    let history: Awaited<ReturnType<typeof flowHistory>>;
    try {
      flow = await getFlow(deps, rights, path);
      history = (await flowHistory(deps, rights, path)).slice(0, 20);
    } catch (error) {
      if (!(error instanceof ApiError) || (error.status !== 403 && error.status !== 404)) throw error;
      return notAvailable(c, who(access), error.message, error.status);
    }
    if (!rights.can('flows', 'write', path)) return notAvailable(c, who(access), `You may read ${path} but not change it.`, 403);
    const saved = Number(c.req.query('saved'));
    const body = { summary: flow.summary, description: flow.description, value: flow.value, ...(flow.schema ? { schema: flow.schema } : {}) };
    return editorResponse(c, access, {
      mode: 'edit',
      path,
      yaml: yaml.stringify(body),
      versions: history.map((v) => ({ id: v.id, created_at: v.created_at, created_by: v.created_by, message: v.deployment_message ?? v.summary })),
      saved: history.some((v) => v.id === saved) ? saved : null,
    });
  });

  return r;
}

function editorResponse(c: Context, access: PageAccess & { ok: true }, view: FlowEditorView): Response {
  const ws = access.rights.workspaceId;
  return pageResponse(
    c,
    renderPage({
      title: view.mode === 'new' ? 'New flow' : `Edit ${view.path}`,
      workspace: ws,
      username: access.principal.username,
      script: null,
      // The editor first (the page's script uses it when it loaded), then the page's script.
      libraries: [editorScript('flow-editor'), consoleBundle('flow-editor-page')],
      libraryStyle: FLOW_EDITOR_STYLE,
      // CodeMirror writes its theme into <style> elements: allowed by a nonce new for this response.
      styleNonce: randomBytes(18).toString('base64'),
      data: { mode: view.mode },
      body: editorBody(ws, new URL(c.req.url).origin, view),
    }),
  );
}

function editorBody(ws: string, origin: string, v: FlowEditorView): Markup {
  const wsUrl = `/w/${encodeURIComponent(ws)}`;
  const kinds = Object.entries(STEP_TEMPLATES).map(([kind, t]) => html`<option value="${kind}">${t.label}</option>`);
  return html`<h1>${v.mode === 'new' ? 'New flow' : html`Edit <span class="muted">flow</span> ${v.path}`}</h1>
${v.mode === 'edit' ? html`<p><a href="${wsUrl}/item/${v.path}">Flow page</a>${v.saved ? html` · <strong id="saved" role="status">Saved as version <code>${v.saved}</code>.</strong>` : ''}</p>` : ''}
<div class="flow-grid">
<section aria-labelledby="graph-heading">
<h2 id="graph-heading">Steps</h2>
<p class="muted" id="graph-help">Select a step (click, or Tab to it and press Enter) to edit it, move it or remove it. On a step, Alt+↑ and Alt+↓ move it within its list and Delete removes it.</p>
<div id="graph" class="graph editor-graph" aria-describedby="graph-help"></div>
<form id="add-form" class="toolbar" aria-label="Add a step at the end of the flow"><label for="add-kind">New step</label><select id="add-kind">${kinds}</select><button type="submit">Add at the end</button></form>
<div id="step-panel" aria-live="polite"><p class="muted">No step selected.</p></div>
</section>
<section aria-labelledby="yaml-heading">
<h2 id="yaml-heading">YAML</h2>
<p id="yaml-help" class="muted">The flow as the API takes it (summary, description, value, schema). Tab indents; press Escape, then Tab, to leave it with the keyboard.</p>
<div id="yaml" class="code-editor"></div>
<textarea id="yaml-text" aria-label="Flow YAML" aria-describedby="yaml-help" spellcheck="false">${v.yaml}</textarea>
<h3 id="problems-heading">Check</h3>
<div id="problems" role="status" aria-labelledby="problems-heading"><p class="muted">Not checked yet.</p></div>
</section>
</div>
<h2>Save</h2>
<form id="save-form" aria-label="Save as a new version" class="filters">
<div><label for="path">Path</label><input id="path" name="path" value="${v.path}" required spellcheck="false" autocomplete="off"${v.mode === 'edit' ? ' readonly' : ''}></div>
<div><label for="deployment-message">What changed (optional)</label><input id="deployment-message" maxlength="1000"></div>
<div><button type="submit" id="save">Save as a new version</button></div>
</form>
<div id="save-message" role="alert"></div>
${runSection(v.mode)}
${v.mode === 'edit' ? versionsSection(v) : ''}
${v.mode === 'edit' ? webhookSection(origin, ws, 'flow', v.path, v.versions[0] ? String(v.versions[0].id) : null) : ''}`;
}

function runSection(mode: 'new' | 'edit'): Markup {
  return html`<h2 id="run-heading">Run</h2>
<p class="muted">"Test run" runs the flow as it is in the editor, without saving it; "Test the selected step" runs only the step selected in the graph, as a flow of that one step with these inputs (what it reads of earlier steps' results is not there)${mode === 'edit' ? '; "Run the saved version" runs the latest saved version' : ''}. The form follows the flow's schema.</p>
<form id="run-form" aria-labelledby="run-heading"><div id="run-fields"></div><div class="toolbar"><button type="submit" id="test-run" value="preview">Test run</button><button type="submit" id="test-step" value="step">Test the selected step</button>${mode === 'edit' ? html`<button type="submit" id="run" value="saved">Run the saved version</button>` : ''}</div></form>
<p id="run-message" role="alert"></p>
<p>Status: <span id="run-status" class="status s-pending">not run</span> <span id="run-link"></span></p>
<div id="run-result" aria-live="polite"></div>`;
}

function versionsSection(v: FlowEditorView): Markup {
  return html`<h2 id="versions-heading">Versions</h2>
<div class="table-wrap"><table aria-labelledby="versions-heading"><thead><tr><th scope="col">Version</th><th scope="col">Created</th><th scope="col">By</th><th scope="col" class="wide">Message</th></tr></thead><tbody>
${v.versions.map((x) => html`<tr><td><code>${x.id}</code></td><td>${formatTime(x.created_at)}</td><td>${x.created_by}</td><td class="wide">${x.message}</td></tr>`)}</tbody></table></div>`;
}

const who = (access: PageAccess & { ok: true }) => ({ workspace: access.rights.workspaceId, username: access.principal.username });
