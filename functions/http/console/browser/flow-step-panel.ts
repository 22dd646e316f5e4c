import { LANGUAGES } from '../../../ports/code-runner.js';
import { languageName } from '../language-names.js';
import { el } from './page-helpers.js';
import { addStep, moveStep, removeStep } from './flow-graph-editing.js';
import { getAt, isObj, lengthAt, placeOf, shown, type FlowEditorPage, type StepDraft, type StepValueDraft } from './flow-editor-context.js';
import { approvalSection, button, checkboxControl, csv, group, kindSelect, num, rebuildPanel, resilienceSection, selectControl, textControl, transformsSection, type SetField } from './flow-step-fields.js';

/**
 * The flow editor's step panel (part of the page's bundle): the selected step's settings — code or
 * script path, inputs (input transforms), approval (suspend) settings, retries and timeout, a
 * loop's iterator, branch conditions — and the graph actions on it (add after, move up or down,
 * remove; add inside a loop or a branch). Each change is one edit of the YAML (`page.applyEdit`),
 * which the graph and the check then follow.
 */

const LANGUAGE_OPTIONS = LANGUAGES.map((l) => [l, languageName(l)] as const);

const KIND_TEXT: Record<string, string> = {
  script: 'script',
  flow: 'sub-flow',
  branchone: 'branch (first match)',
  branchall: 'branches (all)',
  forloopflow: 'for loop',
  whileloopflow: 'while loop',
  consentgate: 'ConsentGate',
  identity: 'identity',
};

function kindText(step: StepDraft, v: StepValueDraft): string {
  if (step.suspend) return 'approval step';
  if (v.type === 'rawscript') return 'inline ' + (typeof v.language === 'string' && v.language ? v.language : '?') + ' script';
  const kind = typeof v.type === 'string' && Object.hasOwn(KIND_TEXT, v.type) ? KIND_TEXT[v.type] : undefined;
  if (kind === undefined) return 'unknown kind ' + String(v.type);
  return v.type === 'script' || v.type === 'flow' ? kind + ' ' + (typeof v.path === 'string' ? v.path : '') : kind;
}

export function renderPanel(page: FlowEditorPage): void {
  const panel = document.getElementById('step-panel');
  if (!panel) return;
  const found = page.selected ? getAt(page, page.selected) : undefined;
  if (!page.selected || !isObj(found)) {
    page.selected = null;
    panel.replaceChildren(el('p', { class: 'muted', text: 'No step selected.' }));
    return;
  }
  const at = page.selected;
  const step: StepDraft = found;
  const v: StepValueDraft = isObj(step.value) ? step.value : {};
  const set: SetField = (rel, value) => page.applyEdit({ op: 'set', field: at + '.' + rel, value });
  const id = shown(step.id);
  const heading = el('h3', { id: 'step-heading', tabindex: '-1', text: 'Step ' + (id || '(no id)') });
  const parts: HTMLElement[] = [heading, el('p', { class: 'muted', text: kindText(step, v) + ' · ' + at }), el('p', { id: 'step-message', role: 'alert' }), structureTools(page, at)];
  parts.push(
    group(
      'Step',
      textControl('id', 'text', 'Id', step.id, (x) => {
        if (set('id', x)) heading.textContent = 'Step ' + x;
      }),
      textControl('summary', 'text', 'Summary', step.summary, (x) => set('summary', x || undefined)),
    ),
  );
  const type = v.type;
  if (type === 'rawscript') {
    parts.push(
      group(
        'Code',
        selectControl('language', 'Language', v.language, LANGUAGE_OPTIONS, (x) => set('value.language', x)),
      ),
      textControl('content', 'textarea', 'Code of ' + (id || 'the step'), v.content, (x) => set('value.content', x)),
    );
  } else if (type === 'script' || type === 'flow') {
    parts.push(group(type === 'script' ? 'Script' : 'Sub-flow', textControl('target-path', 'text', type === 'script' ? 'Script path' : 'Flow path', v.path, (x) => set('value.path', x))));
  } else if (type === 'consentgate') {
    parts.push(
      group(
        'ConsentGate',
        textControl('approvers', 'text', 'Approvers (comma-separated: a user, role:admin, group:name)', Array.isArray(v.approvers) ? v.approvers.join(', ') : '', (x) => set('value.approvers', csv(x))),
        textControl('gate-timeout', 'number', 'Decision timeout (seconds)', v.timeout, (x) => set('value.timeout', num(x))),
        checkboxControl('self-approval', 'Who started the run may decide too', v.self_approval, (x) => set('value.self_approval', x || undefined)),
      ),
      textControl('gate-message', 'textarea', 'Message to approvers', v.message, (x) => set('value.message', x)),
    );
  } else if (type === 'forloopflow' || type === 'whileloopflow') {
    const loopFields = [checkboxControl('skip-failures', 'Skip failed iterations', v.skip_failures, (x) => set('value.skip_failures', x))];
    if (type === 'forloopflow') {
      loopFields.unshift(textControl('iterator', 'text', 'Iterator (JavaScript expression)', isObj(v.iterator) ? v.iterator.expr : undefined, (x) => set('value.iterator', { type: 'javascript', expr: x })));
      loopFields.push(checkboxControl('parallel', 'Run iterations in parallel', v.parallel, (x) => set('value.parallel', x)));
    }
    parts.push(group('Loop', ...loopFields), addInside(page, at + '.value.modules', 'loop', 'Add inside the loop'));
  } else if (type === 'branchone' || type === 'branchall') {
    parts.push(branchesSection(page, at, v, type));
  }
  if (type === 'rawscript' || type === 'script' || type === 'flow') parts.push(transformsSection(page, at, v));
  const branching = type === 'consentgate' || type === 'branchone' || type === 'branchall' || type === 'forloopflow' || type === 'whileloopflow';
  if (!branching) parts.push(approvalSection(page, step, set));
  if (type !== 'consentgate') parts.push(resilienceSection(step, type, set));
  panel.replaceChildren(...parts);
}

/** Move up / down, remove, and add a new step after this one. */
function structureTools(page: FlowEditorPage, at: string): HTMLElement {
  const { list, index } = placeOf(at);
  const count = lengthAt(page, list);
  const up = button('step-up', 'Move up', () => moveStep(page, at, -1, 'step-up'));
  const down = button('step-down', 'Move down', () => moveStep(page, at, 1, 'step-down'));
  up.disabled = index === 0;
  down.disabled = index >= count - 1;
  const remove = button('step-remove', 'Remove this step', () => removeStep(page, at));
  const [label, kinds] = kindSelect('after-kind', 'New step after this one');
  const add = button('step-add-after', 'Add after', () => addStep(page, list, index + 1, kinds.value));
  return el('div', {}, el('div', { class: 'toolbar' }, up, down, remove), el('div', { class: 'toolbar' }, label, kinds, add));
}

function addInside(page: FlowEditorPage, list: string, key: string, text: string): HTMLElement {
  const [label, kinds] = kindSelect('inside-kind-' + key, 'New step');
  const add = button('add-inside-' + key, text, () => addStep(page, list, lengthAt(page, list), kinds.value));
  return el('div', { class: 'toolbar' }, label, kinds, add);
}

function branchesSection(page: FlowEditorPage, at: string, v: StepValueDraft, type: 'branchone' | 'branchall'): HTMLElement {
  const box = el('fieldset', {}, el('legend', { text: type === 'branchone' ? 'Branches (the first whose condition holds runs)' : 'Branches (all run)' }));
  const branches: unknown[] = Array.isArray(v.branches) ? v.branches : [];
  const branchList = at + '.value.branches';
  branches.forEach((found, i) => {
    const b = isObj(found) ? found : {};
    const here = branchList + '.' + i;
    const fields = [textControl('branch-' + i + '-summary', 'text', 'Branch ' + (i + 1) + ' summary', b.summary, (x) => page.applyEdit({ op: 'set', field: here + '.summary', value: x || undefined }))];
    if (type === 'branchone') fields.push(textControl('branch-' + i + '-expr', 'text', 'Branch ' + (i + 1) + ' condition (JavaScript)', b.expr, (x) => page.applyEdit({ op: 'set', field: here + '.expr', value: x })));
    const remove = button('branch-' + i + '-remove', 'Remove branch ' + (i + 1), () => {
      if (page.applyEdit({ op: 'remove', list: branchList, index: i })) rebuildPanel(page, 'branch-add');
    });
    box.append(el('div', { class: 'step-fields' }, ...fields), addInside(page, here + '.modules', 'branch-' + i, 'Add to branch ' + (i + 1)), el('div', { class: 'toolbar' }, remove));
  });
  const fresh = type === 'branchone' ? { summary: '', expr: 'false', modules: [] } : { modules: [] };
  const addBranch = button('branch-add', 'Add a branch', () => {
    if (page.applyEdit({ op: 'insert', list: branchList, index: branches.length, value: fresh })) rebuildPanel(page, 'branch-add');
  });
  box.append(el('div', { class: 'toolbar' }, addBranch));
  if (type === 'branchone') box.append(addInside(page, at + '.value.default', 'default', 'Add to the default branch'));
  else box.append(checkboxControl('branches-parallel', 'Run the branches in parallel', v.parallel !== false, (x) => page.applyEdit({ op: 'set', field: at + '.value.parallel', value: x })));
  return box;
}
