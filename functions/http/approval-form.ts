import { escapeHtml } from './html.js';

/** `suspend.resume_form.schema` (spec 2.4). */
export interface ResumeFormSchema {
  properties: Record<string, Record<string, unknown>>;
  required?: string[];
  order?: string[];
}

/**
 * How the page's script turns an input back into a typed value (see COLLECT in approval-page.ts):
 * text/select -> string, number/integer -> number, boolean -> boolean, multiselect/list -> array,
 * json -> parsed JSON, datetime -> ISO string.
 */
export type FieldKind = 'text' | 'select' | 'number' | 'integer' | 'boolean' | 'multiselect' | 'list' | 'json' | 'datetime';

/** Form fields in `order`, then every remaining property in schema order. */
export function orderedFieldNames(schema: ResumeFormSchema): string[] {
  const names = Object.keys(schema.properties ?? {});
  const ordered = (schema.order ?? []).filter((name, i, all) => names.includes(name) && all.indexOf(name) === i);
  return [...ordered, ...names.filter((name) => !ordered.includes(name))];
}

/** The approval form's fields. Prefill: `defaultArgs` wins over the schema's `default`; `enums` wins over the schema's `enum`. */
export function renderFormFields(schema: ResumeFormSchema, defaultArgs: Record<string, unknown>, enums: Record<string, string[]>): string {
  const required = new Set(schema.required ?? []);
  return orderedFieldNames(schema)
    .map((name, i) => {
      const declared = schema.properties[name];
      const property = isRecord(declared) ? declared : {};
      const value = Object.hasOwn(defaultArgs, name) ? defaultArgs[name] : property.default;
      return renderField(i, name, property, value, required.has(name), Array.isArray(enums[name]) ? enums[name] : undefined);
    })
    .join('\n');
}

const STRING_INPUT_TYPES: Record<string, string> = { date: 'date', time: 'time', email: 'email', uri: 'url', url: 'url', password: 'password' };

function renderField(index: number, name: string, property: Record<string, unknown>, value: unknown, required: boolean, runtimeEnum: string[] | undefined): string {
  const id = `field-${index}`;
  const label = typeof property.title === 'string' && property.title ? property.title : name;
  const description = typeof property.description === 'string' && property.description ? `<p class="hint" id="${escapeHtml(id)}-hint">${escapeHtml(property.description)}</p>` : '';
  const common = (kind: FieldKind) =>
    `id="${escapeHtml(id)}" name="${escapeHtml(name)}" data-field="${escapeHtml(name)}" data-kind="${kind}"` +
    (required ? ' required data-required' : '') +
    (description ? ` aria-describedby="${escapeHtml(id)}-hint"` : '');
  const type = Array.isArray(property.type) ? property.type.find((t) => t !== 'null') : property.type;
  const items = isRecord(property.items) ? property.items : {};
  const marker = required ? ' <span class="required" title="required">*</span>' : '';
  const labelHtml = `<label for="${escapeHtml(id)}">${escapeHtml(label)}${marker}</label>`;

  let control: string;
  if (type === 'boolean') {
    control = `<input type="checkbox" ${common('boolean').replace(' required data-required', ' data-required')}${value === true ? ' checked' : ''}>`;
    return `<div class="field field-boolean">${control} ${labelHtml}${description}</div>`;
  }
  if (type === 'number' || type === 'integer') {
    const bounds = ['minimum', 'maximum'].map((key) => (typeof property[key] === 'number' ? ` ${key.slice(0, 3)}="${property[key]}"` : '')).join('');
    control = `<input type="number" step="${type === 'integer' ? '1' : 'any'}"${bounds} ${common(type)} value="${typeof value === 'number' ? value : ''}">`;
  } else if (type === 'array') {
    const choices = runtimeEnum ?? stringList(items.enum);
    if (choices) {
      const selected = new Set(Array.isArray(value) ? value.map(String) : []);
      control = `<select multiple size="${Math.min(Math.max(choices.length, 2), 8)}" ${common('multiselect')}>${choices.map((c) => option(c, selected.has(c))).join('')}</select>`;
    } else if (items.type === undefined || ['string', 'number', 'integer'].includes(String(items.type))) {
      const lines = Array.isArray(value) ? value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join('\n') : '';
      const itemKind = items.type === 'number' || items.type === 'integer' ? items.type : 'string';
      control = `<textarea rows="3" ${common('list')} data-items="${itemKind}" placeholder="one per line">${escapeHtml(lines)}</textarea>`;
    } else {
      control = jsonTextarea(common('json'), value);
    }
  } else if (type === 'object' || (type !== undefined && type !== 'string')) {
    control = jsonTextarea(common('json'), value);
  } else {
    const choices = runtimeEnum ?? stringList(property.enum);
    const current = value === undefined || value === null ? '' : String(value);
    if (choices) {
      const blank = required && choices.includes(current) ? '' : option('', current === '', required ? '(choose one)' : '(none)');
      control = `<select ${common('select')}>${blank}${choices.map((c) => option(c, c === current)).join('')}</select>`;
    } else if (property.format === 'date-time') {
      // The browser shows local time; the script fills it from data-iso and sends an ISO string back.
      control = `<input type="datetime-local" step="1" ${common('datetime')} data-iso="${escapeHtml(current)}">`;
    } else if (property.format === 'textarea' || property.format === 'multiline') {
      control = `<textarea rows="4" ${common('text')}>${escapeHtml(current)}</textarea>`;
    } else {
      const inputType = STRING_INPUT_TYPES[String(property.format)] ?? 'text';
      control = `<input type="${inputType}" ${common('text')} value="${escapeHtml(current)}">`;
    }
  }
  return `<div class="field">${labelHtml}${description}${control}</div>`;
}

function jsonTextarea(attributes: string, value: unknown): string {
  const text = value === undefined ? '' : JSON.stringify(value, null, 2);
  return `<textarea rows="4" class="json" spellcheck="false" ${attributes} placeholder="JSON">${escapeHtml(text)}</textarea>`;
}

function option(value: string, selected: boolean, text = value): string {
  return `<option value="${escapeHtml(value)}"${selected ? ' selected' : ''}>${escapeHtml(text)}</option>`;
}

function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) ? value.map(String) : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
