import { ApiCallError, createScript, encodePath, generateMetadata, getJob, getScript, getScriptVersion, inferSchema, logUpdate, previewScript } from './console-api.js';
import { byId, el, messageOf, readSchemaForm, schemaFollower, showJson } from './page-helpers.js';
import type { EditorOptions, ScriptEditor } from './script-editor.js';
import type { renderDiff } from './diff-view.js';
import { wireCopyButtons } from './copy-buttons.js';

/**
 * The script editor page's script (script-editor-page.ts renders the page): mounts the editor
 * from the editor bundle (the textarea stays the editor when that did not load), keeps the input
 * form in step with the code, test-runs, saves, and diffs two versions, calling the API through
 * console-api.ts, typed by the API's views. Everything it shows is text (textContent, el()),
 * except the log HTML that the console's log route builds with every character escaped (ansi_up).
 * Bundled by bin/build.js (console-assets/script-editor-page.js).
 */

interface EditorBundle {
  create(parent: HTMLElement, options: EditorOptions): ScriptEditor;
  renderDiff: typeof renderDiff;
}
const bundle = (window as unknown as { svcEditor?: EditorBundle }).svcEditor;

const data = document.body.dataset;
const ws = data.workspace ?? '';
const templates = JSON.parse(data.templates ?? '{}') as Record<string, string>;
const versions = JSON.parse(data.versions ?? '[]') as { hash: string }[];
const fallback = byId<HTMLTextAreaElement>('code-text');
const languageSelect = byId<HTMLSelectElement>('language');
const pathInput = byId<HTMLInputElement>('path');
const followTestSchema = schemaFollower('test-fields');
let inferTimer: ReturnType<typeof setTimeout> | undefined;
let inferSeq = 0;
const runHref = (id: string) => '/w/' + encodeURIComponent(ws) + '/run/' + encodeURIComponent(id);

function codeChanged(): void {
  clearTimeout(inferTimer);
  inferTimer = setTimeout(() => void followCode(), 300);
}

let editor: ScriptEditor;
if (bundle) {
  fallback.hidden = true;
  editor = bundle.create(byId('code'), { doc: fallback.value, language: languageSelect.value, nonce: data.styleNonce ?? '', label: 'Code', describedBy: 'code-help', onChange: codeChanged });
} else {
  editor = { text: () => fallback.value, setText: (t) => void (fallback.value = t), setLanguage: () => {}, focus: () => fallback.focus() };
  fallback.addEventListener('input', codeChanged);
}

// The form follows the code: the inputs a save would infer, the values typed so far kept.
async function followCode(): Promise<void> {
  const seq = ++inferSeq;
  const message = byId('schema-message');
  try {
    const schema = await inferSchema({ language: languageSelect.value, content: editor.text() });
    if (seq !== inferSeq) return;
    message.textContent = '';
    followTestSchema(schema);
  } catch (e) {
    if (seq !== inferSeq) return;
    message.textContent = 'The form follows the last code that could be read. ' + messageOf(e);
  }
}
void followCode();

// What a save would store as the lock, resolved now from the code as it is (nothing is saved).
byId('lock-check').addEventListener('click', () => {
  const status = byId('lock-status');
  const lock = byId('lock');
  status.textContent = 'Resolving the imports…';
  generateMetadata({ path: pathInput.value, language: languageSelect.value, content: editor.text() })
    .then((meta) => {
      lock.textContent = meta.lock ?? '';
      lock.hidden = !meta.lock;
      status.textContent = meta.lock ? 'A save would store this lock (every package pinned):' : 'This code imports no package.';
    })
    .catch((e: unknown) => {
      lock.hidden = true;
      status.textContent = 'The imports cannot be locked: ' + messageOf(e);
    });
});

languageSelect.addEventListener('change', () => {
  const before = languageSelect.dataset.current ?? '';
  const text = editor.text();
  if (text.trim() === '' || text === templates[before]) editor.setText(templates[languageSelect.value] ?? '');
  languageSelect.dataset.current = languageSelect.value;
  editor.setLanguage(languageSelect.value);
  codeChanged();
});

function setStatus(status: string): void {
  const badge = byId('test-status');
  badge.className = 'status s-' + status;
  badge.textContent = status;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function testRun(args: Record<string, unknown>): Promise<void> {
  const logs = byId('test-logs');
  const id = await previewScript({ path: pathInput.value, language: languageSelect.value, content: editor.text(), args });
  setStatus('queued');
  byId('test-link').replaceChildren(el('a', { href: runHref(id), text: 'run page' }));
  let offset = 0;
  for (;;) {
    const update = await logUpdate(id, offset).catch((e: unknown) => {
      throw new Error('the run could not be followed (' + messageOf(e) + ')');
    });
    if (update.html) logs.insertAdjacentHTML('beforeend', update.html);
    offset = update.log_offset;
    if (update.completed) break;
    setStatus(update.running ? 'running' : 'queued');
    await sleep(400);
  }
  const job = await getJob(id);
  setStatus(job.status);
  showJson(byId('test-result'), job.result);
}

byId('test-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const message = byId('test-message');
  const result = byId('test-result');
  message.textContent = '';
  let args: Record<string, unknown>;
  try {
    args = readSchemaForm(byId('test-fields'));
  } catch (e) {
    message.textContent = messageOf(e);
    return;
  }
  const button = byId<HTMLButtonElement>('test-run');
  button.disabled = true;
  byId('test-logs').replaceChildren();
  result.replaceChildren(el('p', { class: 'muted', text: 'Running…' }));
  byId('test-link').replaceChildren();
  testRun(args)
    .catch((e: unknown) => {
      message.textContent = messageOf(e);
      result.replaceChildren();
    })
    .finally(() => (button.disabled = false));
});

type SaveBody = Parameters<typeof createScript>[0];
const editHref = (path: string) => '/w/' + encodeURIComponent(ws) + '/scripts/edit/' + encodePath(path);

// A save is a new version of the one this page was opened on: someone else's save meanwhile is a 409.
async function save(): Promise<void> {
  const body: SaveBody = { path: pathInput.value.trim(), language: languageSelect.value, content: editor.text(), summary: byId<HTMLInputElement>('summary').value, parent_hash: data.parentHash || null };
  const note = byId<HTMLInputElement>('deployment-message').value.trim();
  if (note) body.deployment_message = note;
  let hash: string;
  try {
    hash = await createScript(body);
  } catch (e) {
    if (e instanceof ApiCallError && e.status === 409) return reportConflict(body, e.message);
    throw e;
  }
  location.assign(editHref(body.path) + '?saved=' + encodeURIComponent(hash));
}

byId('save-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const message = byId('save-message');
  message.replaceChildren();
  byId('conflict-diff').replaceChildren();
  const button = byId<HTMLButtonElement>('save');
  button.disabled = true;
  save()
    .catch((e: unknown) => message.append(el('p', { text: messageOf(e) })))
    .finally(() => (button.disabled = false));
});

async function reportConflict(body: SaveBody, refusal: string): Promise<void> {
  const message = byId('save-message');
  const latest = await getScript(body.path).catch(() => null); // gone or not readable
  if (latest && data.mode === 'new') {
    message.append(el('p', {}, 'Not saved: a script already exists at ' + body.path + '. ', el('a', { href: editHref(body.path), text: 'Edit it instead' }), ' (your code stays here until you leave the page).'));
    return;
  }
  if (!latest || latest.hash === body.parent_hash) {
    message.append(el('p', { text: 'Not saved: ' + (refusal || 'conflict') }));
    return;
  }
  message.append(
    el('p', { text: 'Not saved: ' + latest.created_by + ' saved a newer version (' + latest.hash + ') of ' + body.path + ' at ' + latest.created_at.replace('T', ' ').slice(0, 19) + ' while you were editing. Your code is still in the editor; below is what differs between their version and yours. Copy what you need, open the page again, and save on top of their version.' }),
  );
  bundle?.renderDiff(byId('conflict-diff'), latest.content, body.content, 'Their version ' + latest.hash + ' → your code');
}

async function showDiff(from: string, to: string): Promise<void> {
  const message = byId('diff-message');
  message.textContent = '';
  try {
    const [a, b] = await Promise.all([from, to].map((hash) => getScriptVersion(hash)));
    if (!bundle) throw new Error('the editor could not load, so no diff can be shown');
    const counts = bundle.renderDiff(byId('diff'), a.content, b.content, 'From ' + from + ' to ' + to);
    message.textContent = '';
    byId('diff').prepend(el('p', { class: 'muted', text: counts.added + ' lines added, ' + counts.removed + ' removed' }));
  } catch (e) {
    message.textContent = messageOf(e);
  }
}
document.getElementById('diff-form')?.addEventListener('submit', (event) => {
  event.preventDefault();
  void showDiff(byId<HTMLSelectElement>('diff-from').value, byId<HTMLSelectElement>('diff-to').value);
});
wireCopyButtons();
// Just saved on top of an earlier version: what this save changed.
if (document.getElementById('saved') && versions.length > 1) void showDiff(versions[1].hash, versions[0].hash);
