import { badRequest } from '../common/errors.js';
import type { SuspendSettings } from '../flows/definition.js';

/**
 * Spec 2.6: an approval's payload against the step's form (`suspend.resume_form.schema`): the
 * fields it marks required, and the JSON types it declares, enforced on every channel as the
 * approval page enforces them. A GET's query carries text only, so its values are taken as sent.
 */
export function assertFormFields(settings: SuspendSettings, payload: unknown, byGet: boolean): void {
  const values = isRecord(payload) ? payload : {};
  const schema = settings.resume_form?.schema;
  for (const field of schema?.required ?? []) {
    const v = values[field];
    if (v === undefined || v === null || v === '') throw badRequest('invalid_payload', `${field}: required by the approval form`, { field });
  }
  if (byGet || !schema) return;
  for (const [field, value] of Object.entries(values)) {
    const property = Object.hasOwn(schema.properties, field) ? schema.properties[field] : undefined;
    if (!property || value === null || fitsDeclared(value, property)) continue;
    throw badRequest('invalid_payload', `${field}: the approval form declares type ${describeTypes(property)}`, { field });
  }
}

/** JSON Schema's `type` (one name or a list); an undeclared type takes anything. */
function declaredTypes(property: Record<string, unknown>): string[] {
  const { type } = property;
  return (Array.isArray(type) ? type : [type]).filter((t): t is string => typeof t === 'string');
}

function fitsDeclared(value: unknown, property: Record<string, unknown>): boolean {
  const types = declaredTypes(property);
  if (types.length === 0) return true;
  const items = isRecord(property.items) ? property.items : {};
  return types.some((t) => (t === 'array' ? Array.isArray(value) && value.every((item) => fitsDeclared(item, items)) : hasType(value, t)));
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'object':
      return isRecord(value);
    case 'null':
      return value === null;
    default:
      return true;
  }
}

/** `number`, `string or null`, `array of integer`. */
function describeTypes(property: Record<string, unknown>): string {
  const items = isRecord(property.items) ? declaredTypes(property.items) : [];
  return declaredTypes(property)
    .map((t) => (t === 'array' && items.length > 0 ? `array of ${items.join(' or ')}` : t))
    .join(' or ');
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
