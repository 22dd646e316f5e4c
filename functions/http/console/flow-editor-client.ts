import { CLIENT_HELPERS } from './client-helpers.js';
import { COPY_BUTTONS_SCRIPT } from './webhook-urls.js';
import { FLOW_PANEL_SCRIPT } from './flow-editor-panel.js';

/** What a new flow starts from: one inline step fed by the flow's input, and that input's schema. */
export const NEW_FLOW = {
  summary: '',
  description: '',
  value: {
    modules: [
      {
        id: 'greet',
        value: {
          type: 'rawscript',
          language: 'bun',
          content: 'export async function main(name: string) {\n  return `hello ${name}`;\n}\n',
          input_transforms: { name: { type: 'javascript', expr: 'flow_input.name' } },
        },
      },
    ],
  },
  schema: { type: 'object', properties: { name: { type: 'string', default: 'world' } }, required: [] },
};

/** The steps the graph adds, each as a new module without its id (the page gives it a free one). */
export const STEP_TEMPLATES: Record<string, { label: string; id: string; step: Record<string, unknown> }> = {
  bun: { label: 'Inline TypeScript', id: 'step', step: { value: { type: 'rawscript', language: 'bun', content: 'export async function main() {\n  return "done";\n}\n', input_transforms: {} } } },
  python3: { label: 'Inline Python', id: 'step', step: { value: { type: 'rawscript', language: 'python3', content: 'def main():\n    return "done"\n', input_transforms: {} } } },
  script: { label: 'Script by path', id: 'call', step: { value: { type: 'script', path: 'f/folder/script', input_transforms: {} } } },
  approval: {
    label: 'Approval step',
    id: 'approval',
    step: { value: { type: 'rawscript', language: 'bun', content: 'export async function main() {\n  return { requested: true };\n}\n', input_transforms: {} }, suspend: { required_events: 1, timeout: 86400 } },
  },
  consentgate: { label: 'ConsentGate', id: 'gate', step: { value: { type: 'consentgate', approvers: ['role:admin'], message: 'Approve {{ workflow.name }}?' } } },
  branchone: { label: 'Branch (first match)', id: 'branch', step: { value: { type: 'branchone', branches: [{ summary: '', expr: 'false', modules: [] }], default: [] } } },
  branchall: { label: 'Branches (all)', id: 'branches', step: { value: { type: 'branchall', branches: [{ modules: [] }, { modules: [] }], parallel: true } } },
  forloopflow: { label: 'For loop', id: 'loop', step: { value: { type: 'forloopflow', iterator: { type: 'javascript', expr: '[1, 2, 3]' }, modules: [], skip_failures: false, parallel: false } } },
};

/** The page's own style (allowed by its hash); CodeMirror's theme comes with the page's nonce. */
export const FLOW_EDITOR_STYLE = [
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

/**
 * The page's script: the YAML editor (the textarea stays the editor when the bundle did not load),
 * the graph drawn from the YAML, the selected step's panel (flow-editor-panel.ts), the live check,
 * save and run. Everything shown is text (textContent, el()), except the graph's SVG, which the
 * console's html template builds with every label escaped.
 */
export const FLOW_EDITOR_TEXT = `${CLIENT_HELPERS}${COPY_BUTTONS_SCRIPT}
const data = document.body.dataset;
const ws = data.workspace;
const byId = (id) => document.getElementById(id);
const F = window.svcFlowEditor;
const stepTemplates = JSON.parse(data.stepTemplates);
const fallback = byId('yaml-text');
const pathInput = byId('path');
let yamlEditor;
let current = {};
let selected = null;
let problems = [];
let yamlTimer = null;
let checkTimer = null;
let checkSeq = 0;

const pathOf = (field) => field.split('.').map((s) => (/^\\d+$/.test(s) ? Number(s) : s));
function getAt(field) {
  let node = current;
  for (const key of pathOf(field)) { if (node === null || typeof node !== 'object') return undefined; node = node[key]; }
  return node;
}
const encodePath = (path) => path.split('/').map(encodeURIComponent).join('/');

if (F) {
  fallback.hidden = true;
  yamlEditor = F.createYaml(byId('yaml'), { doc: fallback.value, nonce: data.styleNonce, label: 'Flow YAML', describedBy: 'yaml-help', onChange: () => { clearTimeout(yamlTimer); yamlTimer = setTimeout(() => yamlChanged(true), 250); } });
} else {
  yamlEditor = { text: () => fallback.value, setText: (t) => { fallback.value = t; }, gotoLine: () => fallback.focus() };
  byId('graph').replaceChildren(el('p', { text: 'The graph could not load: the YAML can still be edited, checked and saved.' }));
  fallback.addEventListener('input', () => { clearTimeout(yamlTimer); yamlTimer = setTimeout(() => yamlChanged(true), 250); });
}

/** The YAML changed (typed, or written by the graph or the panel): graph, panel and check follow. */
function yamlChanged(rebuildPanel) {
  if (!F) return;
  const parsed = F.parse(yamlEditor.text());
  if (parsed.error) {
    clearTimeout(checkTimer);
    checkSeq++;
    problems = [];
    showProblems([{ message: 'YAML: ' + parsed.error.message, line: parsed.error.line }]);
    return;
  }
  current = parsed.value && typeof parsed.value === 'object' && !Array.isArray(parsed.value) ? parsed.value : {};
  drawGraph();
  followSchema();
  if (rebuildPanel) renderPanel();
  scheduleCheck();
}

/** Writes one edit into the YAML (yaml keeps the rest of the text as it was). */
function applyEdit(change, rebuildPanel) {
  // What was typed into the YAML and not yet read is part of the text this edit starts from.
  clearTimeout(yamlTimer);
  try {
    yamlEditor.setText(F.edit(yamlEditor.text(), change));
  } catch (e) {
    const where = byId('step-message');
    if (where) where.textContent = e.message;
    else showProblems([{ message: e.message }]);
    return false;
  }
  yamlChanged(rebuildPanel);
  return true;
}

function drawGraph() {
  const box = byId('graph');
  // The console's html template built this markup with every label escaped.
  box.innerHTML = F.graph(current.value && current.value.modules);
  const invalid = F.stepsWithProblems(problems);
  for (const node of box.querySelectorAll('[data-step]')) {
    const field = node.getAttribute('data-step');
    if (field === selected) node.classList.add('selected');
    if (invalid.includes(field)) node.classList.add('invalid');
    node.addEventListener('click', () => select(field, false));
    node.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); select(field, true); }
      else if (event.altKey && (event.key === 'ArrowUp' || event.key === 'ArrowDown')) { event.preventDefault(); moveStep(field, event.key === 'ArrowUp' ? -1 : 1, null); }
      else if (event.key === 'Delete') { event.preventDefault(); removeStep(field); }
    });
  }
}

function select(field, moveFocus) {
  selected = field;
  drawGraph();
  renderPanel();
  if (moveFocus && byId('step-heading')) byId('step-heading').focus();
}

function focusStep(field) {
  const node = [...byId('graph').querySelectorAll('[data-step]')].find((n) => n.getAttribute('data-step') === field);
  if (node) node.focus();
}

/** Every step id in use, nested ones too: a new step gets one that is free. */
function usedIds() {
  const ids = new Set();
  const visit = (value) => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') { if (typeof value.id === 'string') ids.add(value.id); Object.values(value).forEach(visit); }
  };
  visit(current.value);
  return ids;
}
function newStep(kind) {
  const t = stepTemplates[kind];
  const ids = usedIds();
  let n = 1;
  while (ids.has(t.id + '_' + n)) n++;
  return { id: t.id + '_' + n, ...JSON.parse(JSON.stringify(t.step)) };
}

/** Adds a step of this kind to a list (a field such as value.modules) at an index; selects it. */
function addStep(list, index, kind) {
  const items = getAt(list);
  const at = Math.min(index, Array.isArray(items) ? items.length : 0);
  if (applyEdit({ op: 'insert', list, index: at, value: newStep(kind) }, false)) {
    select(list + '.' + at, false);
    focusStep(list + '.' + at);
  }
}

byId('add-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const list = getAt('value.modules');
  addStep('value.modules', Array.isArray(list) ? list.length : 0, byId('add-kind').value);
});

function scheduleCheck() {
  clearTimeout(checkTimer);
  checkTimer = setTimeout(check, 300);
}

/** The API's own check of the flow as it is now; each error with the step it is in. */
async function check() {
  const seq = ++checkSeq;
  try {
    const body = F ? current : null;
    if (!body) return;
    const found = await F.api.check(body);
    if (seq !== checkSeq) return;
    problems = found;
    showProblems(problems);
    drawGraph();
  } catch (e) {
    if (seq === checkSeq) byId('problems').replaceChildren(el('p', { text: 'Could not check the flow: ' + e.message }));
  }
}

function showProblems(list) {
  F.showProblems(byId('problems'), list, { lineOf: (field) => F.lineOf(yamlEditor.text(), field), select: (field) => select(field, true), gotoLine: (line) => yamlEditor.gotoLine(line) });
}

${FLOW_PANEL_SCRIPT}

// A save is a new version of the flow (a create for a new one).
byId('save-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const message = byId('save-message');
  message.replaceChildren();
  const button = byId('save');
  button.disabled = true;
  try {
    if (F) { const parsed = F.parse(yamlEditor.text()); if (parsed.error) throw new Error('the YAML does not parse: ' + parsed.error.message); }
    const path = pathInput.value.trim();
    const body = { ...current, path };
    const note = byId('deployment-message').value.trim();
    if (note) body.deployment_message = note;
    if (!F) throw new Error('the editor could not load');
    const version = await F.api.save(data.mode === 'new', path, body);
    location.assign('/w/' + encodeURIComponent(ws) + '/flows/edit/' + encodePath(path) + '?saved=' + encodeURIComponent(version));
  } catch (e) {
    message.append(el('p', { text: 'Not saved: ' + e.message }));
    check();
  } finally {
    button.disabled = false;
  }
});

function setStatus(status) {
  const badge = byId('run-status');
  badge.className = 'status s-' + status;
  badge.textContent = status.replace('_', ' ');
}

// The run form follows the flow's schema, keeping the values typed so far.
let schemaText = '';
function followSchema() {
  const text = JSON.stringify(current.schema || null);
  if (text === schemaText) return;
  let values = {};
  try { values = readSchemaForm(byId('run-fields')); } catch { /* a field not valid JSON yet: start it again */ }
  schemaText = text;
  schemaForm(byId('run-fields'), current.schema || {}, values);
}

byId('run-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const saved = event.submitter && event.submitter.value === 'saved';
  const oneStep = event.submitter && event.submitter.value === 'step';
  const message = byId('run-message');
  message.textContent = '';
  let args;
  try { args = readSchemaForm(byId('run-fields')); } catch (e) { message.textContent = e.message; return; }
  const step = oneStep && selected ? getAt(selected) : null;
  if (oneStep && (!step || typeof step !== 'object')) { message.textContent = 'Select a step in the graph first.'; return; }
  const buttons = [...byId('run-form').querySelectorAll('button')];
  buttons.forEach((b) => { b.disabled = true; });
  byId('run-result').replaceChildren();
  byId('run-link').replaceChildren();
  try {
    if (!F) throw new Error('the editor could not load');
    const path = pathInput.value.trim();
    if (!saved) { const parsed = F.parse(yamlEditor.text()); if (parsed.error) throw new Error('the YAML does not parse: ' + parsed.error.message); }
    // One step: a flow of that step alone (its settings kept), run like the whole flow's test.
    const id = await F.api.start({ saved, path, value: oneStep ? { modules: [step] } : current.value, schema: current.schema, args });
    byId('run-link').replaceChildren(el('a', { href: '/w/' + encodeURIComponent(ws) + '/run/' + encodeURIComponent(id), text: 'run page' }));
    setStatus('queued');
    // Until it ends or waits for a person: the run page follows it from there.
    const end = await F.api.follow(id, setStatus);
    if (end.waiting) message.textContent = 'The run waits for an approval: decide on its run page or in the approvals inbox.';
    else showJson(byId('run-result'), end.result);
  } catch (e) {
    message.textContent = e.message;
  } finally {
    buttons.forEach((b) => { b.disabled = false; });
  }
});

yamlChanged(true);
`;
