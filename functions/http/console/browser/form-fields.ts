/**
 * An approval form's fields in a bundled page (the markup is approval-form.ts renderFormFields):
 * `fillDatetimes(root)` shows ISO prefills in local time, `collectFields(form)` reads the typed
 * values back, throwing a message that names a field that is not valid (FieldKind in
 * approval-form.ts lists the kinds).
 */

const pad2 = (n: number) => String(n).padStart(2, '0');

export function fillDatetimes(root: ParentNode): void {
  for (const input of root.querySelectorAll<HTMLInputElement>('[data-kind="datetime"]')) {
    const iso = input.getAttribute('data-iso');
    const d = new Date(iso ?? '');
    if (!iso || isNaN(d.getTime())) continue;
    input.value = d.getFullYear() + '-' + pad2(d.getMonth() + 1) + '-' + pad2(d.getDate()) + 'T' + pad2(d.getHours()) + ':' + pad2(d.getMinutes()) + ':' + pad2(d.getSeconds());
  }
}

function toNumber(text: string, integer: boolean, name: string): number {
  const n = Number(text);
  if (text.trim() === '' || !isFinite(n) || (integer && !Number.isInteger(n))) throw new Error(name + ': expected ' + (integer ? 'an integer' : 'a number'));
  return n;
}

export function collectFields(form: HTMLFormElement): Record<string, unknown> {
  const values = Object.create(null) as Record<string, unknown>; // a field named __proto__ stays a field
  for (const field of form.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>('[data-field]')) {
    const name = field.getAttribute('data-field') ?? '';
    const kind = field.getAttribute('data-kind');
    if (kind === 'boolean' && field instanceof HTMLInputElement) {
      values[name] = field.checked;
      continue;
    }
    if (kind === 'multiselect' && field instanceof HTMLSelectElement) {
      values[name] = Array.from(field.selectedOptions).map((o) => o.value);
      continue;
    }
    if (kind === 'list') {
      const items = field.value.split('\n').map((s) => s.trim()).filter(Boolean);
      const itemKind = field.getAttribute('data-items');
      values[name] = itemKind === 'string' ? items : items.map((s) => toNumber(s, itemKind === 'integer', name));
      continue;
    }
    const text = field.value;
    if (text === '' && !field.hasAttribute('data-required')) continue;
    if (kind === 'number' || kind === 'integer') values[name] = toNumber(text, kind === 'integer', name);
    else if (kind === 'datetime') values[name] = new Date(text).toISOString();
    else if (kind === 'json') {
      try {
        values[name] = JSON.parse(text) as unknown;
      } catch {
        throw new Error(name + ': not valid JSON');
      }
    } else values[name] = text;
  }
  return values;
}
