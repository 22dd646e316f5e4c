import { randomBytes } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { ApiError } from '../../core/common/errors.js';
import { getScriptByPath, scriptHistory } from '../../core/scripts/scripts.js';
import type { CoreDeps } from '../../core/deps.js';
import { LANGUAGES, type ScriptVersion } from '../../ports.js';
import { html, type Markup } from '../html.js';
import { pageAccess, pageResponse, renderPage, type PageAccess, notAvailable } from './layout.js';
import { languageName } from './language-names.js';
import { formatTime } from './time-format.js';
import { consoleBundle, editorScript } from './static-assets.js';
import { webhookSection } from './webhook-urls.js';
import { EDITOR_STYLE, TEMPLATES } from './script-editor-client.js';

/**
 * `/w/<ws>/scripts/new` and `/w/<ws>/scripts/edit/<path>`: the script editor. The code is edited in
 * CodeMirror (the editor bundle, console-assets/script-editor.js); the input form follows the code
 * (`scripts/infer_schema`); a test run runs the code in the editor without saving
 * (`jobs/run/preview`) with its logs and result; a save is a new version naming the version it
 * was edited from (`parent_hash`), so someone else's save meanwhile is reported, not overwritten.
 * An existing script's page also has its versions with a diff of any two, and its webhook URLs.
 */

interface EditorView {
  mode: 'new' | 'edit';
  path: string;
  language: string;
  content: string;
  summary: string;
  description: string;
  /** The version this edit starts from: a save names it as its parent. */
  parentHash: string | null;
  versions: { hash: string; created_at: string; created_by: string; message: string }[];
  /** The hash just saved (`?saved=`), shown as such. */
  saved: string | null;
  /** The lock the saved version runs with (its packages, pinned), or null when it imports none. */
  lock: string | null;
}

export function scriptEditorRoutes(deps: CoreDeps) {
  const r = new Hono();

  r.get('/w/:workspace/scripts/new', async (c) => {
    const access = await pageAccess(deps, c);
    if (!access.ok) return access.response;
    const { rights, principal } = access;
    if (!rights.can('scripts', 'write')) return notAvailable(c, who(access), 'You may not create scripts in this workspace.', 403);
    const language = LANGUAGES.find((l) => l === c.req.query('language')) ?? 'python3';
    const path = c.req.query('path') ?? `u/${principal.username}/`;
    return editorResponse(c, access, { mode: 'new', path, language, content: TEMPLATES[language], summary: '', description: '', parentHash: null, versions: [], saved: null, lock: null });
  });

  r.get('/w/:workspace/scripts/edit/:path{.+}', async (c) => {
    const access = await pageAccess(deps, c);
    if (!access.ok) return access.response;
    const { rights } = access;
    const path = c.req.param('path');
    let script: ScriptVersion;
    let history: Awaited<ReturnType<typeof scriptHistory>>;
    try {
      script = await getScriptByPath(deps.store, rights, path);
      history = await scriptHistory(deps.store, rights, path);
    } catch (error) {
      if (!(error instanceof ApiError) || (error.status !== 403 && error.status !== 404)) throw error;
      return notAvailable(c, who(access), error.message, error.status);
    }
    if (!rights.can('scripts', 'write', path)) return notAvailable(c, who(access), `You may read ${path} but not change it.`, 403);
    const saved = c.req.query('saved');
    return editorResponse(c, access, {
      mode: 'edit',
      path,
      language: script.language,
      content: script.content,
      summary: script.summary,
      description: script.description,
      parentHash: script.hash,
      versions: history.map((v) => ({ hash: v.hash, created_at: v.created_at, created_by: v.created_by, message: v.deployment_message ?? v.summary })),
      saved: saved && history.some((v) => v.hash === saved) ? saved : null,
      lock: script.lock ?? null,
    });
  });

  return r;
}

function editorResponse(c: Context, access: PageAccess & { ok: true }, view: EditorView): Response {
  const ws = access.rights.workspaceId;
  const origin = new URL(c.req.url).origin;
  const bundle = editorScript();
  return pageResponse(
    c,
    renderPage({
      title: view.mode === 'new' ? 'New script' : `Edit ${view.path}`,
      workspace: ws,
      username: access.principal.username,
      // Nothing inline: the page's script is its bundle (browser/script-editor-page.ts).
      script: null,
      // The editor first (the page's script mounts it when it loaded), then the page's script.
      libraries: [bundle, consoleBundle('script-editor-page')],
      libraryStyle: EDITOR_STYLE,
      // CodeMirror writes its theme into <style> elements: allowed by a nonce new for this response.
      styleNonce: randomBytes(18).toString('base64'),
      data: {
        mode: view.mode,
        'parent-hash': view.parentHash ?? '',
        versions: JSON.stringify(view.versions),
        templates: JSON.stringify(TEMPLATES),
      },
      body: editorBody(ws, origin, view),
    }),
  );
}

function editorBody(ws: string, origin: string, v: EditorView): Markup {
  const wsUrl = `/w/${encodeURIComponent(ws)}`;
  return html`<h1>${v.mode === 'new' ? 'New script' : html`Edit <span class="muted">script</span> ${v.path}`}</h1>
${v.mode === 'edit' ? html`<p><a href="${wsUrl}/item/${v.path}">Script page</a>${v.saved ? html` · <strong id="saved" role="status">Saved as version <code>${v.saved}</code>.</strong>` : ''}</p>` : ''}
<div class="editor-grid">
<section aria-labelledby="code-heading">
<h2 id="code-heading">Code</h2>
<div class="editor-meta">
<div><label for="path">Path</label><input id="path" name="path" value="${v.path}" required spellcheck="false" autocomplete="off"${v.mode === 'edit' ? ' readonly' : ''}></div>
<div><label for="language">Language</label><select id="language" name="language" data-current="${v.language}">${LANGUAGES.map((l) => html`<option value="${l}"${l === v.language ? ' selected' : ''}>${languageName(l)}</option>`)}</select></div>
<div><label for="summary">Summary</label><input id="summary" name="summary" value="${v.summary}" maxlength="1000"></div>
</div>
<p id="code-help" class="muted">Tab indents; press Escape, then Tab, to leave the code with the keyboard. The inputs are the parameters of <code>main</code>.</p>
<div id="code" class="code-editor"></div>
<textarea id="code-text" aria-label="Code" aria-describedby="code-help" spellcheck="false">${v.content}</textarea>
<h3>Save</h3>
<form id="save-form" aria-label="Save as a new version">
<label for="deployment-message">What changed (optional)</label><input id="deployment-message" name="deployment_message" maxlength="1000">
<div class="toolbar"><button type="submit" id="save">Save as a new version</button></div>
</form>
<div id="save-message" role="alert"></div><div id="conflict-diff"></div>
</section>
<section aria-labelledby="deps-heading">
<h2 id="deps-heading">Dependencies</h2>
<p id="lock-status" role="status">${v.mode === 'new' ? 'Not saved yet: a save resolves the packages the code imports and pins them in a lock.' : v.lock ? 'The saved version runs with this lock (every package pinned):' : 'The saved version imports no package.'}</p>
<pre id="lock"${v.lock ? '' : ' hidden'}>${v.lock ?? ''}</pre>
<div class="toolbar"><button type="button" id="lock-check">Lock the code as it is now</button></div>
</section>
<section aria-labelledby="test-heading">
<h2 id="test-heading">Test run</h2>
<p class="muted">Runs the code as it is in the editor, with these inputs, without saving it. The form follows the code.</p>
<form id="test-form" aria-label="Test run inputs"><div id="test-fields"></div><div class="toolbar"><button type="submit" id="test-run">Test run</button></div></form>
<p id="schema-message" class="muted" role="status"></p>
<p id="test-message" role="alert"></p>
<p>Status: <span id="test-status" class="status s-pending">not run</span> <span id="test-link"></span></p>
<h3 id="logs-heading">Logs</h3><pre class="logs" id="test-logs" aria-labelledby="logs-heading" tabindex="0"></pre>
<h3>Result</h3><div id="test-result" aria-live="polite"><p class="muted">No result yet.</p></div>
</section>
</div>
${v.mode === 'edit' ? historySection(v) : ''}
${v.mode === 'edit' ? webhookSection(origin, ws, 'script', v.path, v.parentHash) : ''}`;
}

function historySection(v: EditorView): Markup {
  const options = (selected: string | undefined) => v.versions.map((x) => html`<option value="${x.hash}"${x.hash === selected ? ' selected' : ''}>${x.hash} — ${formatTime(x.created_at)} by ${x.created_by}</option>`);
  return html`<h2 id="versions-heading">Versions</h2>
<div class="table-wrap"><table aria-labelledby="versions-heading"><thead><tr><th scope="col">Hash</th><th scope="col">Created</th><th scope="col">By</th><th scope="col" class="wide">Message</th></tr></thead><tbody>
${v.versions.map((x) => html`<tr><td><code>${x.hash}</code></td><td>${formatTime(x.created_at)}</td><td>${x.created_by}</td><td class="wide">${x.message}</td></tr>`)}</tbody></table></div>
<form id="diff-form" aria-label="Compare two versions" class="filters">
<div><label for="diff-from">From version</label><select id="diff-from">${options(v.versions[1]?.hash ?? v.versions[0]?.hash)}</select></div>
<div><label for="diff-to">To version</label><select id="diff-to">${options(v.versions[0]?.hash)}</select></div>
<div><button type="submit">Show the differences</button></div>
</form>
<p id="diff-message" role="alert"></p><div id="diff" aria-live="polite"></div>`;
}

const who = (access: PageAccess & { ok: true }) => ({ workspace: access.rights.workspaceId, username: access.principal.username });
