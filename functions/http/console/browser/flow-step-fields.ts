import { STEP_TEMPLATES } from '../flow-templates.js';
import { byId, el } from './page-helpers.js';
import { isObj, shown, type FlowEditorPage, type RetryDraft, type StepDraft, type StepValueDraft, type SuspendDraft } from './flow-editor-context.js';

/**
 * The flow editor's step panel, its controls and its sections that are the same for every kind of
 * step (inputs, approval, retries and timeout). Each control writes its field into the YAML when it
 * changes (`page.applyEdit`); the panel itself is flow-step-panel.ts.
 */

/** Writes the value of a field under the step (`value.path`); undefined removes it. */
export type SetField = (field: string, value: unknown) => boolean;

const INPUT_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const num = (x: string): number | undefined => (x === '' ? undefined : Number(x));
export const csv = (x: string): string[] =>
  x
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

const labelled = (id: string, label: string, input: HTMLElement) => el('div', {}, el('label', { for: id, text: label }), input);

/** A labelled text, number or textarea control (id `step-<key>`) whose change calls onChange with its text. */
export function textControl(key: string, kind: 'text' | 'number' | 'textarea', label: string, value: unknown, onChange: (text: string) => void): HTMLElement {
  const id = 'step-' + key;
  let input: HTMLInputElement | HTMLTextAreaElement;
  if (kind === 'textarea') {
    input = el('textarea', { id, spellcheck: 'false' });
    input.value = shown(value);
  } else input = el('input', { id, type: kind, value: shown(value), step: kind === 'number' ? 'any' : null, spellcheck: 'false', autocomplete: 'off' });
  input.addEventListener('change', () => onChange(input.value));
  return labelled(id, label, input);
}

export function checkboxControl(key: string, label: string, checked: unknown, onChange: (checked: boolean) => void): HTMLElement {
  const id = 'step-' + key;
  const input = el('input', { id, type: 'checkbox', checked: !!checked });
  input.addEventListener('change', () => onChange(input.checked));
  return el('div', {}, el('label', { for: id }, input, ' ' + label));
}

export function selectControl(key: string, label: string, value: unknown, options: readonly (readonly [string, string])[], onChange: (value: string) => void): HTMLElement {
  const id = 'step-' + key;
  const input = el('select', { id });
  for (const [v, t] of options) input.append(el('option', { value: v, text: t, selected: v === value }));
  input.addEventListener('change', () => onChange(input.value));
  return labelled(id, label, input);
}

export const group = (legend: string, ...children: HTMLElement[]) => el('fieldset', {}, el('legend', { text: legend }), el('div', { class: 'step-fields' }, ...children));

export function button(id: string, text: string, onClick: () => void): HTMLButtonElement {
  const b = el('button', { type: 'button', id, text });
  b.addEventListener('click', onClick);
  return b;
}

/** A labelled choice of the kinds of step that can be added. */
export function kindSelect(id: string, label: string): [HTMLLabelElement, HTMLSelectElement] {
  const select = el('select', { id });
  for (const [kind, t] of Object.entries(STEP_TEMPLATES)) select.append(el('option', { value: kind, text: t.label }));
  return [el('label', { for: id, text: label }), select];
}

/** Rebuilds the panel after an edit that changes what it shows, keeping the keyboard where it was. */
export function rebuildPanel(page: FlowEditorPage, focusId: string | null): void {
  page.renderPanel();
  if (focusId) document.getElementById(focusId)?.focus();
}

/** Input transforms: each input a JavaScript expression (flow_input.x, results.step) or a fixed JSON value. */
export function transformsSection(page: FlowEditorPage, at: string, v: StepValueDraft): HTMLElement {
  const box = el('fieldset', {}, el('legend', { text: 'Inputs' }));
  const transforms = isObj(v.input_transforms) ? v.input_transforms : {};
  const field = (name: string) => at + '.value.input_transforms.' + name;
  const write = (name: string, type: string, text: string) => {
    let value: unknown;
    if (type === 'static') {
      try {
        value = { type, value: JSON.parse(text) as unknown };
      } catch {
        value = { type, value: text };
      }
    } else value = { type: 'javascript', expr: text };
    page.applyEdit({ op: 'set', field: field(name), value });
  };
  for (const [name, t] of Object.entries(transforms)) {
    if (!INPUT_NAME.test(name)) {
      box.append(el('p', { class: 'muted', text: 'Input ' + name + ': edit it in the YAML.' }));
      continue;
    }
    const transform = isObj(t) ? t : {};
    const isStatic = transform.type === 'static';
    const typeSel = el('select', { id: 'input-' + name + '-type' }, el('option', { value: 'javascript', text: 'Expression', selected: !isStatic }), el('option', { value: 'static', text: 'Fixed JSON value', selected: isStatic }));
    const valueInput = el('input', { id: 'input-' + name + '-value', type: 'text', spellcheck: 'false', value: isStatic ? JSON.stringify(transform.value === undefined ? null : transform.value) : shown(transform.expr) });
    typeSel.addEventListener('change', () => write(name, typeSel.value, valueInput.value));
    valueInput.addEventListener('change', () => write(name, typeSel.value, valueInput.value));
    const remove = button('input-' + name + '-remove', 'Remove', () => {
      if (page.applyEdit({ op: 'set', field: field(name), value: undefined })) rebuildPanel(page, 'input-new-name');
    });
    remove.setAttribute('aria-label', 'Remove input ' + name);
    box.append(
      el(
        'div',
        { class: 'transform-row' },
        el('div', {}, el('span', { class: 'muted', text: 'Input' }), el('div', {}, el('code', { text: name }))),
        el('div', {}, el('label', { for: typeSel.id, text: name + ': kind' }), typeSel),
        el('div', {}, el('label', { for: valueInput.id, text: name + ': value' }), valueInput),
        remove,
      ),
    );
  }
  const nameInput = el('input', { id: 'input-new-name', type: 'text', spellcheck: 'false', autocomplete: 'off' });
  const add = button('input-add', 'Add input', () => {
    const name = nameInput.value.trim();
    if (!INPUT_NAME.test(name)) {
      byId('step-message').textContent = 'An input name is letters, digits and _, not starting with a digit.';
      nameInput.focus();
      return;
    }
    if (page.applyEdit({ op: 'set', field: field(name), value: { type: 'javascript', expr: 'flow_input.' + name } })) rebuildPanel(page, 'input-' + name + '-value');
  });
  box.append(el('div', { class: 'toolbar' }, el('label', { for: 'input-new-name', text: 'New input name' }), nameInput, add));
  return box;
}

/** "Wait for approval after this step" and, when it does, the approval's settings (`suspend`). */
export function approvalSection(page: FlowEditorPage, step: StepDraft, set: SetField): HTMLElement {
  const s: SuspendDraft | null = isObj(step.suspend) ? step.suspend : null;
  const toggle = checkboxControl('approval', 'Wait for approval after this step', !!s, (x) => {
    if (set('suspend', x ? { required_events: 1 } : undefined)) rebuildPanel(page, 'step-approval');
  });
  if (!s) return group('Approval', toggle);
  return group(
    'Approval',
    toggle,
    textControl('required-events', 'number', 'Approvals needed', s.required_events, (x) => set('suspend.required_events', num(x))),
    textControl('approval-timeout', 'number', 'Cancel after (seconds)', s.timeout, (x) => set('suspend.timeout', num(x))),
    checkboxControl('auth-required', 'Only logged-in users may approve', s.user_auth_required, (x) => set('suspend.user_auth_required', x || undefined)),
    checkboxControl('self-disabled', 'Who started the run may not approve', s.self_approval_disabled, (x) => set('suspend.self_approval_disabled', x || undefined)),
    textControl('approver-groups', 'text', 'Approver groups (comma-separated)', approverGroups(s.user_groups_required), (x) => set('suspend.user_groups_required', csv(x).length ? csv(x) : undefined)),
  );
}

/**
 * `user_groups_required` as the field shows it, in any form the flow definition accepts: a list or
 * one name (what the field writes), or either wrapped as `{type: static, value}`. An expression is
 * edited in the YAML; the field shows nothing for it.
 */
function approverGroups(required: unknown): string {
  const groups = isObj(required) ? (required.type === 'static' ? required.value : null) : required;
  if (Array.isArray(groups)) return groups.map(String).join(', ');
  return typeof groups === 'string' ? groups : '';
}

/** Retries (constant), the step's timeout (script steps), and whether the flow goes on after a failure. */
export function resilienceSection(step: StepDraft, type: unknown, set: SetField): HTMLElement {
  const retry: RetryDraft = isObj(step.retry) ? step.retry : {};
  const constant = isObj(retry.constant) ? retry.constant : {};
  const writeRetry = () => {
    const attempts = num(byId<HTMLInputElement>('step-retries').value);
    const seconds = num(byId<HTMLInputElement>('step-retry-seconds').value);
    set('retry', attempts === undefined ? undefined : { ...retry, constant: { attempts, seconds: seconds === undefined ? 0 : seconds } });
  };
  const fields = [
    textControl('retries', 'number', 'Retries', constant.attempts, writeRetry),
    textControl('retry-seconds', 'number', 'Seconds between retries', constant.seconds, writeRetry),
    checkboxControl('continue', 'Go on when this step fails', step.continue_on_error, (x) => set('continue_on_error', x || undefined)),
  ];
  if (type === 'rawscript' || type === 'script') fields.splice(2, 0, textControl('timeout', 'number', 'Timeout (seconds)', typeof step.timeout === 'number' ? step.timeout : '', (x) => set('timeout', num(x))));
  return group('Retries and timeout', ...fields);
}
