import { html, raw, type Markup } from './html.js';

/** `suspend.resume_form.schema` (spec 2.4). */
export interface ResumeFormSchema {
  properties: Record<string, Record<string, unknown>>;
  required?: string[];
  order?: string[];
}

/**
 * How the pages' bundled script turns an input back into a typed value (console/browser/form-fields.ts):
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

/**
 * The approval form's fields. Prefill: `defaultArgs` wins over the schema's `default`; `enums` wins over the schema's `enum`.
 * `idPrefix` keeps element ids unique where one page holds several forms.
 */
export function renderFormFields(schema: ResumeFormSchema, defaultArgs: Record<string, unknown>, enums: Record<string, string[]>, idPrefix = 'field'): Markup {
  const required = new Set(schema.required ?? []);
  const fields = orderedFieldNames(schema).map((name, i) => {
    const declared = schema.properties[name];
    const property = isRecord(declared) ? declared : {};
    const value = Object.hasOwn(defaultArgs, name) ? defaultArgs[name] : property.default;
    return html`${i > 0 ? '\n' : ''}${renderField(`${idPrefix}-${i}`, name, property, value, required.has(name), Array.isArray(enums[name]) ? enums[name] : undefined)}`;
  });
  return html`${fields}`;
}

const STRING_INPUT_TYPES: Record<string, string> = { date: 'date', time: 'time', email: 'email', uri: 'url', url: 'url', password: 'password' };

function renderField(id: string, name: string, property: Record<string, unknown>, value: unknown, required: boolean, runtimeEnum: string[] | undefined): Markup {
  const label = typeof property.title === 'string' && property.title ? property.title : name;
  const hint = typeof property.description === 'string' && property.description ? property.description : null;
  const description = hint ? html`<p class="hint" id="${id}-hint">${hint}</p>` : '';
  // A checkbox cannot be `required` (it would have to be ticked); the script reads data-required.
  const common = (kind: FieldKind, requiredAttribute = ' required data-required') =>
    html`id="${id}" name="${name}" data-field="${name}" data-kind="${kind}"${required ? raw(requiredAttribute) : ''}${hint ? html` aria-describedby="${id}-hint"` : ''}`;
  const type = Array.isArray(property.type) ? property.type.find((t) => t !== 'null') : property.type;
  const items = isRecord(property.items) ? property.items : {};
  const marker = required ? html` <span class="required" title="required">*</span>` : '';
  const labelHtml = html`<label for="${id}">${label}${marker}</label>`;

  let control: Markup;
  if (type === 'boolean') {
    control = html`<input type="checkbox" ${common('boolean', ' data-required')}${value === true ? raw(' checked') : ''}>`;
    return html`<div class="field field-boolean">${control} ${labelHtml}${description}</div>`;
  }
  if (type === 'number' || type === 'integer') {
    const bounds = ['minimum', 'maximum'].map((key) => (typeof property[key] === 'number' ? html` ${key.slice(0, 3)}="${property[key]}"` : ''));
    control = html`<input type="number" step="${type === 'integer' ? '1' : 'any'}"${bounds} ${common(type)} value="${typeof value === 'number' ? value : ''}">`;
  } else if (type === 'array') {
    const choices = runtimeEnum ?? stringList(items.enum);
    if (choices) {
      const selected = new Set(Array.isArray(value) ? value.map(String) : []);
      control = html`<select multiple size="${Math.min(Math.max(choices.length, 2), 8)}" ${common('multiselect')}>${choices.map((c) => option(c, selected.has(c)))}</select>`;
    } else if (items.type === undefined || ['string', 'number', 'integer'].includes(String(items.type))) {
      const lines = Array.isArray(value) ? value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join('\n') : '';
      const itemKind = items.type === 'number' || items.type === 'integer' ? items.type : 'string';
      control = html`<textarea rows="3" ${common('list')} data-items="${itemKind}" placeholder="one per line">${lines}</textarea>`;
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
      control = html`<select ${common('select')}>${blank}${choices.map((c) => option(c, c === current))}</select>`;
    } else if (property.format === 'date-time') {
      // The browser shows local time; the script fills it from data-iso and sends an ISO string back.
      control = html`<input type="datetime-local" step="1" ${common('datetime')} data-iso="${current}">`;
    } else if (property.format === 'textarea' || property.format === 'multiline') {
      control = html`<textarea rows="4" ${common('text')}>${current}</textarea>`;
    } else {
      const inputType = STRING_INPUT_TYPES[String(property.format)] ?? 'text';
      control = html`<input type="${inputType}" ${common('text')} value="${current}">`;
    }
  }
  return html`<div class="field">${labelHtml}${description}${control}</div>`;
}

function jsonTextarea(attributes: Markup, value: unknown): Markup {
  const text = value === undefined ? '' : JSON.stringify(value, null, 2);
  return html`<textarea rows="4" class="json" spellcheck="false" ${attributes} placeholder="JSON">${text}</textarea>`;
}

function option(value: string, selected: boolean, text = value): Markup {
  return html`<option value="${value}"${selected ? raw(' selected') : ''}>${text}</option>`;
}

function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) ? value.map(String) : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
