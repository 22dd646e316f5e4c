import { LANGUAGES } from '../../ports.js';
import { languageName } from './language-names.js';

/**
 * The flow editor's step panel, as text joined into the page's script (flow-editor-client.ts):
 * the selected step's settings — code or script path, inputs (input transforms), approval
 * (suspend) settings, retries and timeout, a loop's iterator, branch conditions — and the graph
 * actions on it (add after, move up or down, remove; add inside a loop or a branch). Each change
 * is one edit of the YAML (`applyEdit`), which the graph and the check then follow.
 */
export const FLOW_PANEL_SCRIPT = `
const LANGUAGE_OPTIONS = ${JSON.stringify(LANGUAGES.map((l) => [l, languageName(l)]))};
const INPUT_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const num = (x) => (x === '' ? undefined : Number(x));
const csv = (x) => x.split(',').map((s) => s.trim()).filter(Boolean);

function kindText(step) {
  const v = step.value || {};
  if (step.suspend) return 'approval step';
  return { rawscript: 'inline ' + (v.language || '?') + ' script', script: 'script ' + (v.path || ''), flow: 'sub-flow ' + (v.path || ''), branchone: 'branch (first match)', branchall: 'branches (all)', forloopflow: 'for loop', whileloopflow: 'while loop', consentgate: 'ConsentGate', identity: 'identity' }[v.type] || 'unknown kind ' + String(v.type);
}

/** A labelled control whose change calls onChange with its value (a checkbox's: checked). */
function control(key, kind, label, value, onChange, options) {
  const id = 'step-' + key;
  let input;
  if (kind === 'textarea') { input = el('textarea', { id, spellcheck: 'false' }); input.value = value == null ? '' : String(value); }
  else if (kind === 'checkbox') input = el('input', { id, type: 'checkbox', checked: !!value });
  else if (kind === 'select') { input = el('select', { id }); for (const [v, t] of options) input.append(el('option', { value: v, text: t, selected: v === value })); }
  else input = el('input', { id, type: kind, value: value == null ? '' : String(value), step: kind === 'number' ? 'any' : null, spellcheck: 'false', autocomplete: 'off' });
  input.addEventListener('change', () => onChange(kind === 'checkbox' ? input.checked : input.value));
  if (kind === 'checkbox') return el('div', {}, el('label', { for: id }, input, ' ' + label));
  return el('div', {}, el('label', { for: id, text: label }), input);
}
const group = (legend, ...children) => el('fieldset', {}, el('legend', { text: legend }), el('div', { class: 'step-fields' }, ...children));
function button(id, text, onClick) {
  const b = el('button', { type: 'button', id, text });
  b.addEventListener('click', onClick);
  return b;
}
function kindSelect(id, label) {
  const select = el('select', { id });
  for (const [kind, t] of Object.entries(stepTemplates)) select.append(el('option', { value: kind, text: t.label }));
  return [el('label', { for: id, text: label }), select];
}

/** Rebuilds the panel after an edit that changes what it shows, keeping the keyboard where it was. */
function rebuildPanel(focusId) {
  renderPanel();
  if (focusId && byId(focusId)) byId(focusId).focus();
}

function renderPanel() {
  const panel = byId('step-panel');
  const step = selected ? getAt(selected) : undefined;
  if (!step || typeof step !== 'object' || Array.isArray(step)) {
    selected = null;
    panel.replaceChildren(el('p', { class: 'muted', text: 'No step selected.' }));
    return;
  }
  const at = selected;
  const v = step.value && typeof step.value === 'object' ? step.value : {};
  const set = (rel, value) => applyEdit({ op: 'set', field: at + '.' + rel, value }, false);
  const setAndRebuild = (rel, value, focusId) => { if (applyEdit({ op: 'set', field: at + '.' + rel, value }, false)) rebuildPanel(focusId); };
  const heading = el('h3', { id: 'step-heading', tabindex: '-1', text: 'Step ' + (step.id || '(no id)') });
  const parts = [heading, el('p', { class: 'muted', text: kindText(step) + ' · ' + at }), el('p', { id: 'step-message', role: 'alert' }), structureTools(at)];
  parts.push(group('Step',
    control('id', 'text', 'Id', step.id, (x) => { if (set('id', x)) heading.textContent = 'Step ' + x; }),
    control('summary', 'text', 'Summary', step.summary, (x) => set('summary', x || undefined)),
  ));
  const type = v.type;
  if (type === 'rawscript') {
    parts.push(group('Code',
      control('language', 'select', 'Language', v.language, (x) => set('value.language', x), LANGUAGE_OPTIONS),
    ), control('content', 'textarea', 'Code of ' + (step.id || 'the step'), v.content, (x) => set('value.content', x)));
  } else if (type === 'script' || type === 'flow') {
    parts.push(group(type === 'script' ? 'Script' : 'Sub-flow', control('target-path', 'text', type === 'script' ? 'Script path' : 'Flow path', v.path, (x) => set('value.path', x))));
  } else if (type === 'consentgate') {
    parts.push(group('ConsentGate',
      control('approvers', 'text', 'Approvers (comma-separated: a user, role:admin, group:name)', (v.approvers || []).join(', '), (x) => set('value.approvers', csv(x))),
      control('gate-timeout', 'number', 'Decision timeout (seconds)', v.timeout, (x) => set('value.timeout', num(x))),
      control('self-approval', 'checkbox', 'Who started the run may decide too', v.self_approval, (x) => set('value.self_approval', x || undefined)),
    ), control('gate-message', 'textarea', 'Message to approvers', v.message, (x) => set('value.message', x)));
  } else if (type === 'forloopflow' || type === 'whileloopflow') {
    const loopFields = [control('skip-failures', 'checkbox', 'Skip failed iterations', v.skip_failures, (x) => set('value.skip_failures', x))];
    if (type === 'forloopflow') {
      loopFields.unshift(control('iterator', 'text', 'Iterator (JavaScript expression)', v.iterator && v.iterator.expr, (x) => set('value.iterator', { type: 'javascript', expr: x })));
      loopFields.push(control('parallel', 'checkbox', 'Run iterations in parallel', v.parallel, (x) => set('value.parallel', x)));
    }
    parts.push(group('Loop', ...loopFields), addInside(at + '.value.modules', 'loop', 'Add inside the loop'));
  } else if (type === 'branchone' || type === 'branchall') {
    parts.push(branchesSection(at, v, type));
  }
  if (['rawscript', 'script', 'flow'].includes(type)) parts.push(transformsSection(at, v));
  if (type !== 'consentgate' && !['branchone', 'branchall', 'forloopflow', 'whileloopflow'].includes(type)) parts.push(approvalSection(at, step, setAndRebuild, set));
  if (type !== 'consentgate') parts.push(resilienceSection(at, step, type, set));
  panel.replaceChildren(...parts);
}

/** Where a step is: its list (value.modules) and its index there. */
function placeOf(field) {
  const dot = field.lastIndexOf('.');
  return { list: field.slice(0, dot), index: Number(field.slice(dot + 1)) };
}

/** Moves a step one place up (-1) or down (+1) in its list; the moved step stays selected. */
function moveStep(field, delta, focusId) {
  const { list, index } = placeOf(field);
  const to = index + delta;
  if (to < 0 || to >= (getAt(list) || []).length) return;
  if (!applyEdit({ op: 'move', list, from: index, to }, false)) return;
  selected = list + '.' + to;
  drawGraph();
  renderPanel();
  if (focusId && byId(focusId) && !byId(focusId).disabled) byId(focusId).focus();
  else focusStep(selected);
}

/** Removes a step; the keyboard goes to the step now in its place, or the one before, or "New step". */
function removeStep(field) {
  const { list, index } = placeOf(field);
  if (!applyEdit({ op: 'remove', list, index }, false)) return;
  selected = null;
  drawGraph();
  renderPanel();
  const left = (getAt(list) || []).length;
  if (left > 0) focusStep(list + '.' + Math.min(index, left - 1));
  else byId('add-kind').focus();
}

/** Move up / down, remove, and add a new step after this one. */
function structureTools(at) {
  const { list, index } = placeOf(at);
  const count = (getAt(list) || []).length;
  const up = button('step-up', 'Move up', () => moveStep(at, -1, 'step-up'));
  const down = button('step-down', 'Move down', () => moveStep(at, 1, 'step-down'));
  up.disabled = index === 0;
  down.disabled = index >= count - 1;
  const remove = button('step-remove', 'Remove this step', () => removeStep(at));
  const [label, kinds] = kindSelect('after-kind', 'New step after this one');
  const add = button('step-add-after', 'Add after', () => addStep(list, index + 1, kinds.value));
  return el('div', {}, el('div', { class: 'toolbar' }, up, down, remove), el('div', { class: 'toolbar' }, label, kinds, add));
}

function addInside(list, key, text) {
  const [label, kinds] = kindSelect('inside-kind-' + key, 'New step');
  const add = button('add-inside-' + key, text, () => addStep(list, (getAt(list) || []).length, kinds.value));
  return el('div', { class: 'toolbar' }, label, kinds, add);
}

function branchesSection(at, v, type) {
  const box = el('fieldset', {}, el('legend', { text: type === 'branchone' ? 'Branches (the first whose condition holds runs)' : 'Branches (all run)' }));
  const branches = Array.isArray(v.branches) ? v.branches : [];
  branches.forEach((b, i) => {
    const here = at + '.value.branches.' + i;
    const fields = [control('branch-' + i + '-summary', 'text', 'Branch ' + (i + 1) + ' summary', b && b.summary, (x) => applyEdit({ op: 'set', field: here + '.summary', value: x || undefined }, false))];
    if (type === 'branchone') fields.push(control('branch-' + i + '-expr', 'text', 'Branch ' + (i + 1) + ' condition (JavaScript)', b && b.expr, (x) => applyEdit({ op: 'set', field: here + '.expr', value: x }, false)));
    const remove = button('branch-' + i + '-remove', 'Remove branch ' + (i + 1), () => { if (applyEdit({ op: 'remove', list: at + '.value.branches', index: i }, false)) rebuildPanel('branch-add'); });
    box.append(el('div', { class: 'step-fields' }, ...fields), addInside(here + '.modules', 'branch-' + i, 'Add to branch ' + (i + 1)), el('div', { class: 'toolbar' }, remove));
  });
  const fresh = type === 'branchone' ? { summary: '', expr: 'false', modules: [] } : { modules: [] };
  box.append(el('div', { class: 'toolbar' }, button('branch-add', 'Add a branch', () => { if (applyEdit({ op: 'insert', list: at + '.value.branches', index: branches.length, value: fresh }, false)) rebuildPanel('branch-add'); })));
  if (type === 'branchone') box.append(addInside(at + '.value.default', 'default', 'Add to the default branch'));
  else box.append(control('branches-parallel', 'checkbox', 'Run the branches in parallel', v.parallel !== false, (x) => applyEdit({ op: 'set', field: at + '.value.parallel', value: x }, false)));
  return box;
}

/** Input transforms: each input a JavaScript expression (flow_input.x, results.step) or a fixed JSON value. */
function transformsSection(at, v) {
  const box = el('fieldset', {}, el('legend', { text: 'Inputs' }));
  const transforms = v.input_transforms && typeof v.input_transforms === 'object' ? v.input_transforms : {};
  const write = (name, type, text) => {
    let value;
    if (type === 'static') { try { value = { type, value: JSON.parse(text) }; } catch { value = { type, value: text }; } }
    else value = { type: 'javascript', expr: text };
    applyEdit({ op: 'set', field: at + '.value.input_transforms.' + name, value }, false);
  };
  for (const [name, t] of Object.entries(transforms)) {
    if (!INPUT_NAME.test(name)) { box.append(el('p', { class: 'muted', text: 'Input ' + name + ': edit it in the YAML.' })); continue; }
    const isStatic = t && t.type === 'static';
    const typeSel = el('select', { id: 'input-' + name + '-type' }, el('option', { value: 'javascript', text: 'Expression', selected: !isStatic }), el('option', { value: 'static', text: 'Fixed JSON value', selected: isStatic }));
    const valueInput = el('input', { id: 'input-' + name + '-value', type: 'text', spellcheck: 'false', value: isStatic ? JSON.stringify(t.value === undefined ? null : t.value) : (t && t.expr) || '' });
    typeSel.addEventListener('change', () => write(name, typeSel.value, valueInput.value));
    valueInput.addEventListener('change', () => write(name, typeSel.value, valueInput.value));
    const remove = button('input-' + name + '-remove', 'Remove', () => { if (applyEdit({ op: 'set', field: at + '.value.input_transforms.' + name, value: undefined }, false)) rebuildPanel('input-new-name'); });
    remove.setAttribute('aria-label', 'Remove input ' + name);
    box.append(el('div', { class: 'transform-row' },
      el('div', {}, el('span', { class: 'muted', text: 'Input' }), el('div', {}, el('code', { text: name }))),
      el('div', {}, el('label', { for: typeSel.id, text: name + ': kind' }), typeSel),
      el('div', {}, el('label', { for: valueInput.id, text: name + ': value' }), valueInput),
      remove));
  }
  const nameInput = el('input', { id: 'input-new-name', type: 'text', spellcheck: 'false', autocomplete: 'off' });
  const add = button('input-add', 'Add input', () => {
    const name = nameInput.value.trim();
    const message = byId('step-message');
    if (!INPUT_NAME.test(name)) { message.textContent = 'An input name is letters, digits and _, not starting with a digit.'; nameInput.focus(); return; }
    if (applyEdit({ op: 'set', field: at + '.value.input_transforms.' + name, value: { type: 'javascript', expr: 'flow_input.' + name } }, false)) rebuildPanel('input-' + name + '-value');
  });
  box.append(el('div', { class: 'toolbar' }, el('label', { for: 'input-new-name', text: 'New input name' }), nameInput, add));
  return box;
}

function approvalSection(at, step, setAndRebuild, set) {
  const s = step.suspend && typeof step.suspend === 'object' ? step.suspend : null;
  const toggle = control('approval', 'checkbox', 'Wait for approval after this step', !!s, (x) => setAndRebuild('suspend', x ? { required_events: 1 } : undefined, 'step-approval'));
  if (!s) return group('Approval', toggle);
  const groups = s.user_groups_required && s.user_groups_required.type === 'static' && s.user_groups_required.value;
  return group('Approval',
    toggle,
    control('required-events', 'number', 'Approvals needed', s.required_events, (x) => set('suspend.required_events', num(x))),
    control('approval-timeout', 'number', 'Cancel after (seconds)', s.timeout, (x) => set('suspend.timeout', num(x))),
    control('auth-required', 'checkbox', 'Only logged-in users may approve', s.user_auth_required, (x) => set('suspend.user_auth_required', x || undefined)),
    control('self-disabled', 'checkbox', 'Who started the run may not approve', s.self_approval_disabled, (x) => set('suspend.self_approval_disabled', x || undefined)),
    control('approver-groups', 'text', 'Approver groups (comma-separated)', Array.isArray(groups) ? groups.join(', ') : typeof groups === 'string' ? groups : '', (x) => set('suspend.user_groups_required', csv(x).length ? csv(x) : undefined)),
  );
}

/** Retries (constant), the step's timeout (script steps), and whether the flow goes on after a failure. */
function resilienceSection(at, step, type, set) {
  const constant = (step.retry && step.retry.constant) || {};
  const writeRetry = () => {
    const attempts = num(byId('step-retries').value);
    const seconds = num(byId('step-retry-seconds').value);
    set('retry', attempts === undefined ? undefined : { ...(step.retry || {}), constant: { attempts, seconds: seconds === undefined ? 0 : seconds } });
  };
  const fields = [
    control('retries', 'number', 'Retries', constant.attempts, writeRetry),
    control('retry-seconds', 'number', 'Seconds between retries', constant.seconds, writeRetry),
    control('continue', 'checkbox', 'Go on when this step fails', step.continue_on_error, (x) => set('continue_on_error', x || undefined)),
  ];
  if (type === 'rawscript' || type === 'script') fields.splice(2, 0, control('timeout', 'number', 'Timeout (seconds)', typeof step.timeout === 'number' ? step.timeout : '', (x) => set('timeout', num(x))));
  return group('Retries and timeout', ...fields);
}
`;
