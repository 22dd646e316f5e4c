/**
 * What the console's bundled pages share (bundled into each by bin/build.js):
 *
 * - `el(tag, attrs, ...children)`: an element built from text only (no HTML is parsed);
 * - `showJson(container, value)`: a collapsible view of a JSON value;
 * - `schemaForm(container, schema, values)`: inputs for an input schema's properties (types, enums,
 *   defaults, required), and `readSchemaForm(container)` to read them back; a field that is not
 *   valid JSON where JSON is expected throws an Error naming it.
 */

type Attrs = Record<string, string | boolean | null | undefined>;

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs, ...children: (Node | string | null | undefined)[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === false || v === null || v === undefined) continue;
    if (k === 'class') node.className = String(v);
    else if (k === 'text') node.textContent = String(v);
    else node.setAttribute(k, v === true ? '' : v);
  }
  node.append(...children.filter((c): c is Node | string => c !== null && c !== undefined));
  return node;
}

/** The element with this id; the page's markup has it (a missing one is a bug of the page). */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`the page has no #${id}`);
  return node as T;
}

/** A message to show for what a call threw. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function jsonView(value: unknown, depth = 0): HTMLElement {
  if (value === null || typeof value !== 'object') {
    const kind = typeof value === 'string' ? 'str' : typeof value === 'number' ? 'num' : 'lit';
    return el('span', { class: kind, text: JSON.stringify(value) });
  }
  const entries: [string, unknown][] = Array.isArray(value) ? value.map((v: unknown, i) => [String(i), v]) : Object.entries(value);
  const box = el('details', { open: depth < 2 });
  box.append(el('summary', { text: Array.isArray(value) ? 'array [' + entries.length + ']' : 'object {' + entries.length + '}' }));
  for (const [k, v] of entries) box.append(el('div', {}, el('span', { class: 'k', text: k + ': ' }), jsonView(v, depth + 1)));
  return box;
}

export function showJson(container: HTMLElement, value: unknown): void {
  container.replaceChildren(el('div', { class: 'json' }, jsonView(value)));
}

interface SchemaProperty {
  type?: string;
  enum?: unknown[];
  default?: unknown;
  description?: string;
}
/** An input schema as scripts and flows keep it (JSON Schema's object properties, with `order`). */
export interface InputSchema {
  properties?: Record<string, SchemaProperty>;
  required?: string[];
  order?: string[];
}

function asInputSchema(schema: unknown): InputSchema {
  return schema && typeof schema === 'object' ? (schema as InputSchema) : {};
}

export function schemaForm(container: HTMLElement, schemaValue: unknown, values: Record<string, unknown>): void {
  const schema = asInputSchema(schemaValue);
  container.replaceChildren();
  const props = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  const order = schema.order ?? Object.keys(props);
  for (const name of order) {
    const p: SchemaProperty = props[name] ?? {};
    const id = container.id + '-' + name;
    const value = Object.prototype.hasOwnProperty.call(values, name) ? values[name] : p.default;
    const label = el('label', { for: id, text: name + (required.has(name) ? ' *' : '') + (p.type ? ' (' + p.type + ')' : '') + (p.description ? ' — ' + p.description : '') });
    let input: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
    if (Array.isArray(p.enum)) {
      const select = el('select', { id, name, required: required.has(name) });
      if (!required.has(name)) select.append(el('option', { value: '', text: '' }));
      for (const option of p.enum) select.append(el('option', { value: JSON.stringify(option), text: String(option), selected: JSON.stringify(option) === JSON.stringify(value) }));
      input = select;
    } else if (p.type === 'boolean') {
      input = el('input', { id, name, type: 'checkbox', checked: value === true });
    } else if (p.type === 'number' || p.type === 'integer') {
      input = el('input', { id, name, type: 'number', step: p.type === 'integer' ? '1' : 'any', required: required.has(name), value: value === undefined ? '' : String(value) });
    } else if (p.type === 'string' || (p.type === undefined && typeof value === 'string')) {
      input = el('input', { id, name, type: 'text', required: required.has(name), value: value === undefined ? '' : String(value) });
    } else {
      input = el('textarea', { id, name, required: required.has(name) });
      input.value = value === undefined ? '' : JSON.stringify(value, null, 2);
      input.dataset.json = 'true';
    }
    input.dataset.type = p.type ?? '';
    container.append(el('div', {}, label, input));
  }
  if (order.length === 0) container.append(el('p', { class: 'muted', text: 'No inputs.' }));
}

/**
 * A run form that follows a schema its editor changes as the text does: redrawn only when the schema
 * changed, keeping the values typed so far (a field not valid JSON yet starts again).
 */
export function schemaFollower(containerId: string): (schema: unknown) => void {
  let drawn: string | undefined;
  return (schema) => {
    const text = JSON.stringify(schema ?? null);
    if (text === drawn) return;
    const container = byId(containerId);
    let values: Record<string, unknown> = {};
    try {
      values = readSchemaForm(container);
    } catch {
      // a field not valid JSON yet: start it again
    }
    drawn = text;
    schemaForm(container, schema ?? {}, values);
  };
}

export function readSchemaForm(container: HTMLElement): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const input of container.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>('input, select, textarea')) {
    const name = input.name;
    if (input instanceof HTMLInputElement && input.type === 'checkbox') {
      args[name] = input.checked;
      continue;
    }
    if (input.value === '') continue;
    if (input instanceof HTMLSelectElement) args[name] = JSON.parse(input.value) as unknown;
    else if (input.type === 'number') args[name] = Number(input.value);
    else if (input.dataset.json === 'true') {
      try {
        args[name] = JSON.parse(input.value) as unknown;
      } catch {
        throw new Error(name + ': not valid JSON');
      }
    } else args[name] = input.value;
  }
  return args;
}
