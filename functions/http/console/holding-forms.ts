import { html, type Markup } from '../html.js';
import { CLIENT_HELPERS, FORM_API_HELPERS } from './client-helpers.js';
import { hashOf } from './layout.js';

/**
 * The pieces of the pages for what a workspace holds (schedules, variables, connections, routes,
 * folders, groups, members): tables the server renders through the core with the person's rights,
 * and forms and buttons that name the API call they make (`data-api`). One static script sends
 * each with the session cookie and reloads the page, so a page never does more than the API lets
 * its user, and shows the API's refusal as it comes.
 */

export interface Field {
  name: string;
  label: string;
  /** `json` and `list` (comma-separated) are sent parsed; `checkbox` as a boolean. */
  kind?: 'text' | 'password' | 'checkbox' | 'json' | 'list' | 'select';
  required?: boolean;
  value?: string;
  checked?: boolean;
  options?: readonly string[];
  placeholder?: string;
}

/** An item path or name as it goes in an API URL: each segment encoded, the slashes kept. */
export function apiPath(prefix: string, path: string): string {
  return `${prefix}/${path.split('/').map(encodeURIComponent).join('/')}`;
}

/** A form that POSTs its fields as a JSON body to `/api/w/<ws><api>`. */
export function apiForm(id: string, api: string, label: string, submit: string, fields: Field[], inline = false): Markup {
  return html`<form id="${id}" class="${inline ? 'inline' : 'filters'}" data-api="${api}" aria-label="${label}">${fields.map((f) => fieldMarkup(id, f))}<div><button type="submit">${submit}</button></div></form>`;
}

function fieldMarkup(formId: string, f: Field): Markup {
  const id = `${formId}-${f.name}`;
  const label = html`<label for="${id}">${f.label}${f.required ? ' *' : ''}</label>`;
  switch (f.kind) {
    case 'checkbox':
      return html`<div><label for="${id}"><input id="${id}" name="${f.name}" type="checkbox"${f.checked ? html` checked` : ''}> ${f.label}</label></div>`;
    case 'json':
      return html`<div>${label}<textarea id="${id}" name="${f.name}" data-json="true"${f.required ? html` required` : ''}>${f.value ?? ''}</textarea></div>`;
    case 'select':
      return html`<div>${label}<select id="${id}" name="${f.name}"${f.required ? html` required` : ''}>${(f.options ?? []).map((o) => html`<option value="${o}"${o === f.value ? html` selected` : ''}>${o}</option>`)}</select></div>`;
    default:
      return html`<div>${label}<input id="${id}" name="${f.name}" type="${f.kind === 'password' ? 'password' : 'text'}" autocomplete="off"${f.kind === 'list' ? html` data-list="true"` : ''}${f.required ? html` required` : ''} value="${f.value ?? ''}" placeholder="${f.placeholder ?? ''}"></div>`;
  }
}

/**
 * A button that makes one API call. A destructive one asks first: its first press arms it
 * ("Confirm: ..."), the second acts; no dialog, so it works the same with the keyboard.
 */
export function apiButton(text: string, api: string, opts: { method?: 'POST' | 'DELETE'; body?: unknown; danger?: boolean; label?: string } = {}): Markup {
  return html`<button type="button" data-api="${api}" data-method="${opts.method ?? 'POST'}"${opts.body === undefined ? '' : html` data-body="${JSON.stringify(opts.body)}"`}${opts.danger ? html` class="danger" data-confirm="true"` : ''} aria-label="${opts.label ?? text}">${text}</button>`;
}

/** A page's message line (the API's refusal) and, after a reload, what the last action did. */
export const MESSAGE_LINE = html`<p id="done" class="muted" role="status"></p><p id="message" role="alert"></p>`;

const HOLDING_TEXT = `${CLIENT_HELPERS}${FORM_API_HELPERS}
const message = document.getElementById('message');
const done = document.getElementById('done');
done.textContent = sessionStorage.getItem('svc-done') || '';
sessionStorage.removeItem('svc-done');

function bodyOf(form) {
  const body = {};
  for (const input of form.elements) {
    if (!input.name) continue;
    if (input.type === 'checkbox') { body[input.name] = input.checked; continue; }
    if (input.value === '' && !input.required) continue;
    if (input.dataset.json === 'true') {
      try { body[input.name] = JSON.parse(input.value); } catch { throw new Error(input.name + ': not valid JSON'); }
    } else if (input.dataset.list === 'true') {
      body[input.name] = input.value.split(',').map((s) => s.trim()).filter(Boolean);
    } else {
      body[input.name] = input.value;
    }
  }
  return body;
}

async function act(method, path, body, what) {
  message.textContent = '';
  try {
    await apiCall(path, method === 'DELETE' ? { method } : { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  } catch (e) {
    message.textContent = e.message;
    return;
  }
  sessionStorage.setItem('svc-done', what);
  location.reload();
}

for (const form of document.querySelectorAll('form[data-api]')) {
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    let body;
    try { body = bodyOf(form); } catch (e) { message.textContent = e.message; return; }
    act('POST', form.dataset.api, body, 'Done: ' + form.getAttribute('aria-label') + '.');
  });
}

for (const button of document.querySelectorAll('button[data-api]')) {
  const text = button.textContent;
  button.addEventListener('click', () => {
    if (button.dataset.confirm === 'true' && button.dataset.armed !== 'true') {
      button.dataset.armed = 'true';
      button.textContent = 'Confirm: ' + text;
      return;
    }
    act(button.dataset.method, button.dataset.api, button.dataset.body ? JSON.parse(button.dataset.body) : {}, 'Done: ' + button.getAttribute('aria-label') + '.');
  });
  button.addEventListener('blur', () => { button.dataset.armed = 'false'; button.textContent = text; });
}
`;

export const HOLDING_SCRIPT = { text: HOLDING_TEXT, hash: hashOf(HOLDING_TEXT) };
