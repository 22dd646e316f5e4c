import { html, type Markup } from '../html.js';
import type { ButtonActionName, FormActionName } from './browser/holding-actions.js';

/**
 * The pieces of the pages for what a workspace holds (schedules, variables, connections, routes,
 * folders, groups, members): tables the server renders through the core with the person's rights,
 * and forms and buttons that name the action they take (`data-api`, one of the typed API calls of
 * browser/holding-actions.ts) and the item it is about (`data-target`). The pages' bundle
 * (browser/holdings-page.ts) makes each call with the session cookie and reloads the page, so a
 * page never does more than the API lets its user, and shows the API's refusal as it comes.
 */

export interface Field {
  name: string;
  label: string;
  /** `json` is sent parsed, `list` (comma-separated) as a list, `checkbox` as a boolean. */
  kind?: 'text' | 'password' | 'checkbox' | 'json' | 'list' | 'select';
  required?: boolean;
  value?: string;
  checked?: boolean;
  options?: readonly string[];
  placeholder?: string;
}

/** A form's or a button's call: the action, and the item it is about (a path, a name). */
export interface ActionCall<A extends string> {
  action: A;
  target?: string;
}

/** A form whose fields make the action's request (form-fields.ts reads them: `data-field`, `data-kind`, `data-required`). */
export function apiForm(id: string, call: ActionCall<FormActionName>, label: string, submit: string, fields: Field[], inline = false): Markup {
  return html`<form id="${id}" class="${inline ? 'inline' : 'filters'}" data-api="${call.action}"${targetOf(call)} aria-label="${label}">${fields.map((f) => fieldMarkup(id, f))}<div><button type="submit">${submit}</button></div></form>`;
}

const targetOf = (call: ActionCall<string>) => (call.target === undefined ? '' : html` data-target="${call.target}"`);

function fieldMarkup(formId: string, f: Field): Markup {
  const id = `${formId}-${f.name}`;
  const label = html`<label for="${id}">${f.label}${f.required ? ' *' : ''}</label>`;
  const read = html` data-field="${f.name}"${f.required ? html` required data-required` : ''}`;
  switch (f.kind) {
    case 'checkbox':
      return html`<div><label for="${id}"><input id="${id}" name="${f.name}" type="checkbox" data-field="${f.name}" data-kind="boolean"${f.checked ? html` checked` : ''}> ${f.label}</label></div>`;
    case 'json':
      return html`<div>${label}<textarea id="${id}" name="${f.name}" data-kind="json"${read}>${f.value ?? ''}</textarea></div>`;
    case 'select':
      return html`<div>${label}<select id="${id}" name="${f.name}"${read}>${(f.options ?? []).map((o) => html`<option value="${o}"${o === f.value ? html` selected` : ''}>${o}</option>`)}</select></div>`;
    default:
      return html`<div>${label}<input id="${id}" name="${f.name}" type="${f.kind === 'password' ? 'password' : 'text'}" autocomplete="off"${read} value="${f.value ?? ''}" placeholder="${f.placeholder ?? ''}"></div>`;
  }
}

/**
 * A button that makes one API call. A destructive one asks first: its first press arms it
 * ("Confirm: ..."), the second acts; no dialog, so it works the same with the keyboard.
 */
export function apiButton(text: string, call: ActionCall<ButtonActionName> & { value?: string }, opts: { danger?: boolean; label?: string } = {}): Markup {
  return html`<button type="button" data-api="${call.action}"${targetOf(call)}${call.value === undefined ? '' : html` data-value="${call.value}"`}${opts.danger ? html` class="danger" data-confirm="true"` : ''} aria-label="${opts.label ?? text}">${text}</button>`;
}

/** A page's message line (the API's refusal) and, after a reload, what the last action did. */
export const MESSAGE_LINE = html`<p id="done" class="muted" role="status"></p><p id="message" role="alert"></p>`;
