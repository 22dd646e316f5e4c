import { wireCopyButtons } from './copy-buttons.js';
import { flowEditorCalls } from './flow-editor-calls.js';
import { addStep, drawGraph, select } from './flow-graph-editing.js';
import { showProblems, type ShownProblem } from './flow-problems.js';
import { followSchema, wireRunForm, wireSaveForm } from './flow-editor-run.js';
import { renderPanel } from './flow-step-panel.js';
import { byId, el, messageOf } from './page-helpers.js';
import { isObj, lengthAt, type FlowEditorPage } from './flow-editor-context.js';
import type { Edit, FlowEditorLibrary, YamlEditor } from './flow-editor.js';

/**
 * The flow editor page's script (flow-editor-page.ts renders the page's markup; bin/build.js
 * bundles this as console-assets/flow-editor-page.js). It mounts the YAML editor from the editor
 * bundle (the textarea stays the editor when that did not load), and keeps the graph
 * (flow-graph-editing.ts), the step panel (flow-step-panel.ts), the API's check and the run form
 * (flow-editor-run.ts) following the YAML. Everything shown is text (textContent, el()), except
 * the graph's SVG, which the console's html template builds with every label escaped.
 */

const lib = (window as unknown as { svcFlowEditor?: FlowEditorLibrary }).svcFlowEditor;
const data = document.body.dataset;
let yamlTimer: ReturnType<typeof setTimeout> | undefined;
let checkTimer: ReturnType<typeof setTimeout> | undefined;
let checkSeq = 0;

/** Typing in the YAML: the rest follows a quarter of a second after the last key. */
function yamlTyped(): void {
  clearTimeout(yamlTimer);
  yamlTimer = setTimeout(() => yamlChanged(true), 250);
}

function mountYaml(): YamlEditor {
  const fallback = byId<HTMLTextAreaElement>('yaml-text');
  if (lib) {
    fallback.hidden = true;
    return lib.createYaml(byId('yaml'), { doc: fallback.value, nonce: data.styleNonce ?? '', label: 'Flow YAML', describedBy: 'yaml-help', onChange: yamlTyped });
  }
  byId('graph').replaceChildren(el('p', { text: 'The graph could not load: the YAML can still be edited, checked and saved.' }));
  fallback.addEventListener('input', yamlTyped);
  return { text: () => fallback.value, setText: (t) => void (fallback.value = t), gotoLine: () => fallback.focus() };
}

const page: FlowEditorPage = {
  lib,
  yaml: mountYaml(),
  current: {},
  selected: null,
  problems: [],
  applyEdit,
  drawGraph: () => drawGraph(page),
  renderPanel: () => renderPanel(page),
  select: (field, moveFocus) => select(page, field, moveFocus),
  check: () => void check(),
};

/** The YAML changed (typed, or written by the graph or the panel): graph, panel and check follow. */
function yamlChanged(rebuildPanel: boolean): void {
  if (!lib) return;
  const parsed = lib.parse(page.yaml.text());
  if (parsed.error) {
    clearTimeout(checkTimer);
    checkSeq++;
    page.problems = [];
    listProblems([{ message: 'YAML: ' + parsed.error.message, line: parsed.error.line }]);
    return;
  }
  page.current = isObj(parsed.value) ? parsed.value : {};
  page.drawGraph();
  followSchema(page);
  if (rebuildPanel) page.renderPanel();
  scheduleCheck();
}

function applyEdit(change: Edit): boolean {
  // What was typed into the YAML and not yet read is part of the text this edit starts from.
  clearTimeout(yamlTimer);
  try {
    if (!lib) throw new Error('the editor could not load');
    page.yaml.setText(lib.edit(page.yaml.text(), change));
  } catch (e) {
    const where = document.getElementById('step-message');
    if (where) where.textContent = messageOf(e);
    else listProblems([{ message: messageOf(e) }]);
    return false;
  }
  yamlChanged(false);
  return true;
}

function scheduleCheck(): void {
  clearTimeout(checkTimer);
  checkTimer = setTimeout(() => void check(), 300);
}

/** The API's own check of the flow as it is now; each error with the step it is in. */
async function check(): Promise<void> {
  const seq = ++checkSeq;
  if (!lib) return;
  try {
    const found = await flowEditorCalls.check(page.current);
    if (seq !== checkSeq) return;
    page.problems = found;
    listProblems(found);
    page.drawGraph();
  } catch (e) {
    if (seq === checkSeq) byId('problems').replaceChildren(el('p', { text: 'Could not check the flow: ' + messageOf(e) }));
  }
}

function listProblems(list: ShownProblem[]): void {
  showProblems(byId('problems'), list, {
    lineOf: (field) => (lib ? lib.lineOf(page.yaml.text(), field) : null),
    select: (field) => page.select(field, true),
    gotoLine: (line) => page.yaml.gotoLine(line),
  });
}

byId('add-form').addEventListener('submit', (event) => {
  event.preventDefault();
  addStep(page, 'value.modules', lengthAt(page, 'value.modules'), byId<HTMLSelectElement>('add-kind').value);
});
wireSaveForm(page);
wireRunForm(page);
wireCopyButtons();
yamlChanged(true);
