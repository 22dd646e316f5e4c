/**
 * Browser code shared by console pages, as text joined into each page's static script (no build
 * step, no module loading: the CSP allows exactly the page's script by its hash).
 *
 * - `jsonView(value)`: a collapsible view of a JSON value built with DOM nodes (text only).
 * - `schemaForm(container, schema, values)`: inputs for an input schema's properties (types,
 *   enums, defaults, required), and `readSchemaForm(container, schema)` to read them back; a field
 *   that is not valid JSON where JSON is expected throws an Error naming it.
 */
export const CLIENT_HELPERS = `
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === false || v === null || v === undefined) continue;
    if (k === 'class') node.className = v; else if (k === 'text') node.textContent = v; else node.setAttribute(k, v === true ? '' : v);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

function jsonView(value, depth) {
  depth = depth || 0;
  if (value === null || typeof value !== 'object') {
    const kind = typeof value === 'string' ? 'str' : typeof value === 'number' ? 'num' : 'lit';
    return el('span', { class: kind, text: JSON.stringify(value) });
  }
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
  const box = el('details', { open: depth < 2 });
  box.append(el('summary', { text: Array.isArray(value) ? 'array [' + entries.length + ']' : 'object {' + entries.length + '}' }));
  for (const [k, v] of entries) {
    const line = el('div', {}, el('span', { class: 'k', text: k + ': ' }), jsonView(v, depth + 1));
    box.append(line);
  }
  return box;
}

function showJson(container, value) {
  container.replaceChildren(el('div', { class: 'json' }, jsonView(value)));
}

function schemaForm(container, schema, values) {
  container.replaceChildren();
  const props = (schema && schema.properties) || {};
  const required = new Set((schema && schema.required) || []);
  const order = (schema && schema.order) || Object.keys(props);
  for (const name of order) {
    const p = props[name] || {};
    const id = container.id + '-' + name;
    const has = Object.prototype.hasOwnProperty.call(values || {}, name);
    const value = has ? values[name] : p.default;
    const label = el('label', { for: id, text: name + (required.has(name) ? ' *' : '') + (p.type ? ' (' + p.type + ')' : '') + (p.description ? ' — ' + p.description : '') });
    let input;
    if (Array.isArray(p.enum)) {
      input = el('select', { id, name, required: required.has(name) });
      if (!required.has(name)) input.append(el('option', { value: '', text: '' }));
      for (const option of p.enum) input.append(el('option', { value: JSON.stringify(option), text: String(option), selected: JSON.stringify(option) === JSON.stringify(value) }));
    } else if (p.type === 'boolean') {
      input = el('input', { id, name, type: 'checkbox', checked: value === true });
    } else if (p.type === 'number' || p.type === 'integer') {
      input = el('input', { id, name, type: 'number', step: p.type === 'integer' ? '1' : 'any', required: required.has(name), value: value === undefined ? '' : String(value) });
    } else if (p.type === 'string' || p.type === undefined && typeof value === 'string') {
      input = el('input', { id, name, type: 'text', required: required.has(name), value: value === undefined ? '' : String(value) });
    } else {
      input = el('textarea', { id, name, required: required.has(name) });
      input.value = value === undefined ? '' : JSON.stringify(value, null, 2);
      input.dataset.json = 'true';
    }
    input.dataset.type = p.type || '';
    container.append(el('div', {}, label, input));
  }
  if (order.length === 0) container.append(el('p', { class: 'muted', text: 'No inputs.' }));
}

function readSchemaForm(container) {
  const args = {};
  for (const input of container.querySelectorAll('input, select, textarea')) {
    const name = input.name;
    if (input.type === 'checkbox') { args[name] = input.checked; continue; }
    if (input.value === '') continue;
    if (input.tagName === 'SELECT') { args[name] = JSON.parse(input.value); continue; }
    if (input.type === 'number') { args[name] = Number(input.value); continue; }
    if (input.dataset.json === 'true') {
      try { args[name] = JSON.parse(input.value); } catch { throw new Error(name + ': not valid JSON'); }
      continue;
    }
    args[name] = input.value;
  }
  return args;
}
`;

/**
 * `apiCall(path, init)` and `postJson(path, body, trigger)`: the settings pages' generic forms
 * (holding-forms.ts), which post what a form holds and read only the error of a refusal. Every
 * other console page calls the API through its typed bundle (browser/console-api.ts).
 */
export const FORM_API_HELPERS = `
async function apiCall(path, init) {
  const res = await fetch('/api/w/' + encodeURIComponent(document.body.dataset.workspace) + path, { credentials: 'same-origin', ...init });
  if (res.status === 401) { location.assign('/login?next=' + encodeURIComponent(location.pathname + location.search)); throw new Error('not signed in'); }
  const text = await res.text();
  let answer = text;
  try { answer = JSON.parse(text); } catch { /* plain text answers (a job id) */ }
  if (!res.ok) throw new Error((answer && answer.error && answer.error.message) || 'request failed (' + res.status + ')');
  return answer;
}

// trigger: what the run list shows as having started a run this call starts (X-Svc-Trigger).
function postJson(path, body, trigger) {
  const headers = { 'content-type': 'application/json' };
  if (trigger) headers['x-svc-trigger'] = trigger;
  return apiCall(path, { method: 'POST', headers, body: JSON.stringify(body) });
}
`;
