import type { Language } from '../../ports.js';
import { CLIENT_HELPERS } from './client-helpers.js';
import { COPY_BUTTONS_SCRIPT } from './webhook-urls.js';

/** What a new script starts from, per language: a `main` with one input, so the form shows one field. */
export const TEMPLATES: Record<Language, string> = {
  python3: 'def main(name: str = "world"):\n    print(f"hello {name}")\n    return {"greeting": f"hello {name}"}\n',
  bun: 'export async function main(name: string = "world") {\n  console.log(`hello ${name}`);\n  return { greeting: `hello ${name}` };\n}\n',
  nativets: 'export async function main(name: string = "world") {\n  console.log(`hello ${name}`);\n  return { greeting: `hello ${name}` };\n}\n',
  deno: 'export async function main(name: string = "world") {\n  console.log(`hello ${name}`);\n  return { greeting: `hello ${name}` };\n}\n',
  bash: 'name="${1:-world}"\necho "hello $name"\n',
  go: 'package inner\n\nimport "fmt"\n\nfunc main(name string) (interface{}, error) {\n\tfmt.Println("hello", name)\n\treturn map[string]string{"greeting": "hello " + name}, nil\n}\n',
};

/** The editor page's own style (allowed by its hash like the console's); CodeMirror's theme comes with its nonce. */
export const EDITOR_STYLE = [
  '.editor-grid{display:grid;grid-template-columns:minmax(0,1fr);gap:1rem}',
  '@media (min-width:64rem){.editor-grid{grid-template-columns:minmax(0,3fr) minmax(0,2fr)}}',
  '.editor-meta{display:grid;grid-template-columns:repeat(auto-fill,minmax(11rem,1fr));gap:.5rem;margin-bottom:.5rem}',
  '.code-editor .cm-editor{border:1px solid #888;min-height:16rem;max-height:70vh;font-size:.9rem}.code-editor .cm-scroller{font-family:ui-monospace,monospace}',
  '.code-editor .cm-editor.cm-focused{outline:3px solid #f9ab00;outline-offset:1px}',
  '#code-text{min-height:16rem}',
  'table.diff{font-family:ui-monospace,monospace;font-size:.85em}table.diff td{border:0;padding:0 .4rem;white-space:pre-wrap;word-break:break-word}',
  'table.diff td.no{color:var(--muted);text-align:right;width:3ch}table.diff td.sign{width:1ch}table.diff caption{text-align:left;font-family:system-ui,sans-serif;padding:.3rem 0}',
  'table.diff tr.add{background:#e6ffec}table.diff tr.del{background:#ffebe9}table.diff tr.skip td{color:var(--muted);font-style:italic}',
].join('');

/**
 * The page's script: mounts the editor (the textarea stays the editor when the bundle did not
 * load), keeps the input form in step with the code, test-runs, saves, and diffs two versions.
 * Everything it shows is text (textContent, el()), except the log HTML that the console's log
 * route builds with every character escaped (ansi_up).
 */
export const SCRIPT_EDITOR_TEXT = `${CLIENT_HELPERS}${COPY_BUTTONS_SCRIPT}
const data = document.body.dataset;
const ws = data.workspace;
const byId = (id) => document.getElementById(id);
const templates = JSON.parse(data.templates);
const versions = JSON.parse(data.versions);
const fallback = byId('code-text');
const languageSelect = byId('language');
const pathInput = byId('path');
let editor;
let schemaText = '';
let inferTimer = null;
let inferSeq = 0;

if (window.svcEditor) {
  fallback.hidden = true;
  editor = window.svcEditor.create(byId('code'), { doc: fallback.value, language: languageSelect.value, nonce: data.styleNonce, label: 'Code', describedBy: 'code-help', onChange: codeChanged });
} else {
  editor = { text: () => fallback.value, setText: (t) => { fallback.value = t; }, setLanguage: () => {}, focus: () => fallback.focus() };
  fallback.addEventListener('input', codeChanged);
}

function codeChanged() {
  clearTimeout(inferTimer);
  inferTimer = setTimeout(inferSchema, 300);
}

// The form follows the code: the inputs a save would infer, the values typed so far kept.
async function inferSchema() {
  const seq = ++inferSeq;
  const message = byId('schema-message');
  try {
    const schema = await postJson('/scripts/infer_schema', { language: languageSelect.value, content: editor.text() });
    if (seq !== inferSeq) return;
    message.textContent = '';
    const text = JSON.stringify(schema);
    if (text === schemaText) return;
    let values = {};
    try { values = readSchemaForm(byId('test-fields')); } catch { /* a field not valid JSON yet: start it again */ }
    schemaText = text;
    schemaForm(byId('test-fields'), schema, values);
  } catch (e) {
    if (seq !== inferSeq) return;
    message.textContent = 'The form follows the last code that could be read. ' + e.message;
  }
}
inferSchema();

// What a save would store as the lock, resolved now from the code as it is (nothing is saved).
byId('lock-check').addEventListener('click', async () => {
  const status = byId('lock-status');
  const lock = byId('lock');
  status.textContent = 'Resolving the imports…';
  try {
    const meta = await postJson('/scripts/generate_metadata', { path: byId('path').value, language: languageSelect.value, content: editor.text() });
    lock.textContent = meta.lock || '';
    lock.hidden = !meta.lock;
    status.textContent = meta.lock ? 'A save would store this lock (every package pinned):' : 'This code imports no package.';
  } catch (e) {
    lock.hidden = true;
    status.textContent = 'The imports cannot be locked: ' + e.message;
  }
});

languageSelect.addEventListener('change', () => {
  const before = languageSelect.dataset.current;
  const text = editor.text();
  if (text.trim() === '' || text === templates[before]) editor.setText(templates[languageSelect.value] || '');
  languageSelect.dataset.current = languageSelect.value;
  editor.setLanguage(languageSelect.value);
  codeChanged();
});

function setStatus(status) {
  const badge = byId('test-status');
  badge.className = 'status s-' + status;
  badge.textContent = status;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

byId('test-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const message = byId('test-message');
  const logs = byId('test-logs');
  const result = byId('test-result');
  message.textContent = '';
  let args;
  try { args = readSchemaForm(byId('test-fields')); } catch (e) { message.textContent = e.message; return; }
  const button = byId('test-run');
  button.disabled = true;
  logs.replaceChildren();
  result.replaceChildren(el('p', { class: 'muted', text: 'Running…' }));
  byId('test-link').replaceChildren();
  try {
    const id = await postJson('/jobs/run/preview', { path: pathInput.value, language: languageSelect.value, content: editor.text(), args }, 'console');
    setStatus('queued');
    byId('test-link').replaceChildren(el('a', { href: '/w/' + encodeURIComponent(ws) + '/run/' + encodeURIComponent(id), text: 'run page' }));
    let offset = 0;
    for (;;) {
      const res = await fetch('/w/' + encodeURIComponent(ws) + '/run/' + encodeURIComponent(id) + '/logs?log_offset=' + offset, { credentials: 'same-origin' });
      if (!res.ok) throw new Error('the run could not be followed (' + res.status + ')');
      const update = await res.json();
      if (update.html) logs.insertAdjacentHTML('beforeend', update.html);
      offset = update.log_offset;
      if (update.completed) break;
      setStatus(update.running ? 'running' : 'queued');
      await sleep(400);
    }
    const job = await apiCall('/jobs_u/get/' + encodeURIComponent(id));
    setStatus(job.status);
    showJson(result, job.result);
  } catch (e) {
    message.textContent = e.message;
    result.replaceChildren();
  } finally {
    button.disabled = false;
  }
});

// A save is a new version of the one this page was opened on: someone else's save meanwhile is a 409.
byId('save-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const message = byId('save-message');
  message.replaceChildren();
  byId('conflict-diff').replaceChildren();
  const button = byId('save');
  button.disabled = true;
  const body = { path: pathInput.value.trim(), language: languageSelect.value, content: editor.text(), summary: byId('summary').value, parent_hash: data.parentHash || null };
  const note = byId('deployment-message').value.trim();
  if (note) body.deployment_message = note;
  try {
    const res = await fetch('/api/w/' + encodeURIComponent(ws) + '/scripts/create', { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    if (res.status === 409) return await reportConflict(body, text);
    if (!res.ok) {
      let answer = {};
      try { answer = JSON.parse(text); } catch { /* not JSON */ }
      throw new Error((answer.error && answer.error.message) || 'the save failed (' + res.status + ')');
    }
    location.assign('/w/' + encodeURIComponent(ws) + '/scripts/edit/' + body.path.split('/').map(encodeURIComponent).join('/') + '?saved=' + encodeURIComponent(text));
  } catch (e) {
    message.append(el('p', { text: e.message }));
  } finally {
    button.disabled = false;
  }
});

async function reportConflict(body, text) {
  const message = byId('save-message');
  let latest = null;
  try { latest = await apiCall('/scripts/get/p/' + body.path.split('/').map(encodeURIComponent).join('/')); } catch { /* gone or not readable */ }
  if (latest && data.mode === 'new') {
    const href = '/w/' + encodeURIComponent(ws) + '/scripts/edit/' + body.path.split('/').map(encodeURIComponent).join('/');
    message.append(el('p', {}, 'Not saved: a script already exists at ' + body.path + '. ', el('a', { href, text: 'Edit it instead' }), ' (your code stays here until you leave the page).'));
    return;
  }
  if (!latest || latest.hash === body.parent_hash) {
    let answer = {};
    try { answer = JSON.parse(text); } catch { /* not JSON */ }
    message.append(el('p', { text: 'Not saved: ' + ((answer.error && answer.error.message) || 'conflict') }));
    return;
  }
  message.append(
    el('p', { text: 'Not saved: ' + latest.created_by + ' saved a newer version (' + latest.hash + ') of ' + body.path + ' at ' + latest.created_at.replace('T', ' ').slice(0, 19) + ' while you were editing. Your code is still in the editor; below is what differs between their version and yours. Copy what you need, open the page again, and save on top of their version.' }),
  );
  if (window.svcEditor) window.svcEditor.renderDiff(byId('conflict-diff'), latest.content, body.content, 'Their version ' + latest.hash + ' → your code');
}

const diffForm = byId('diff-form');
if (diffForm) {
  diffForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    await showDiff(byId('diff-from').value, byId('diff-to').value);
  });
}

async function showDiff(from, to) {
  const message = byId('diff-message');
  message.textContent = '';
  try {
    const [a, b] = await Promise.all([from, to].map((hash) => apiCall('/scripts/get/h/' + encodeURIComponent(hash))));
    if (!window.svcEditor) throw new Error('the editor could not load, so no diff can be shown');
    const counts = window.svcEditor.renderDiff(byId('diff'), a.content, b.content, 'From ' + from + ' to ' + to);
    message.textContent = '';
    byId('diff').prepend(el('p', { class: 'muted', text: counts.added + ' lines added, ' + counts.removed + ' removed' }));
  } catch (e) {
    message.textContent = e.message;
  }
}
// Just saved on top of an earlier version: what this save changed.
if (byId('saved') && versions.length > 1) showDiff(versions[1].hash, versions[0].hash);
`;
