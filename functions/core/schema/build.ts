import type { InputSchema } from '../../ports.js';
import { SchemaInferenceError } from './errors.js';

export const JSON_SCHEMA_DRAFT = 'https://json-schema.org/draft/2020-12/schema';

export type PropertySchema = Record<string, unknown>;

/** One input of `main`, as each language parser reports it. */
export interface ParamInfo {
  name: string;
  schema: PropertySchema;
  required: boolean;
}

/**
 * Builds a record from entries without assigning through `obj[key]`: a parameter or object key
 * named `__proto__` must become a property, not replace the prototype.
 */
export const recordOf = <T>(entries: Iterable<readonly [string, T]>): Record<string, T> =>
  Object.fromEntries(entries) as Record<string, T>;

export function toInputSchema(params: readonly ParamInfo[]): InputSchema {
  const seen = new Set<string>();
  for (const p of params) {
    if (seen.has(p.name)) throw new SchemaInferenceError(`duplicate parameter "${p.name}" in main`);
    seen.add(p.name);
  }
  return {
    $schema: JSON_SCHEMA_DRAFT,
    type: 'object',
    properties: recordOf(params.map((p) => [p.name, p.schema] as const)),
    required: params.filter((p) => p.required).map((p) => p.name),
    order: params.map((p) => p.name),
  };
}

/**
 * The schema of a TypeScript parameter known only by its default value (JavaScript has one
 * number type, so a number is `number` even when it looks whole). Arrays get `items` when every
 * element has the same primitive type, which is what a form needs to render a list editor.
 */
export function schemaOfValue(value: unknown): PropertySchema {
  if (value === null) return {};
  if (Array.isArray(value)) {
    const itemTypes = new Set(value.map((v) => schemaOfValue(v).type));
    const [only] = itemTypes;
    return itemTypes.size === 1 && typeof only === 'string' && only !== 'array' && only !== 'object'
      ? { type: 'array', items: { type: only } }
      : { type: 'array' };
  }
  switch (typeof value) {
    case 'string':
      return { type: 'string' };
    case 'boolean':
      return { type: 'boolean' };
    case 'number':
      return { type: 'number' };
    case 'object':
      return { type: 'object' };
    default:
      return {};
  }
}

/**
 * The schema of a union of types (null left out). Members of one JSON type merge: `'a' | 'b'` is
 * a string enum, `int | Literal[1]` an integer. A union of different types cannot be rendered as
 * one form field, so it accepts anything: `{}`.
 */
export function mergeUnion(members: readonly PropertySchema[]): PropertySchema {
  if (members.length === 1) return members[0];
  const types = new Set(members.map((m) => m.type));
  const [type] = types;
  if (members.length === 0 || types.size !== 1 || typeof type !== 'string') return {};
  if (members.every((m) => Array.isArray(m.enum))) {
    return { type, enum: [...new Set(members.flatMap((m) => m.enum as unknown[]))] };
  }
  if (type === 'array' || type === 'object') {
    // `string[] | number[]`: unless the members are alike, only the outer type is certain.
    const first = JSON.stringify(members[0]);
    return members.every((m) => JSON.stringify(m) === first) ? members[0] : { type };
  }
  return { type };
}

/** The schema of a parameter that asks for a resource of the given type (`postgresql`). */
export function resourceSchema(resourceType: string): PropertySchema {
  return { type: 'object', format: `resource-${resourceType}` };
}

/**
 * The resource type a type name stands for: `db: Postgresql` wants a `postgresql`. Resource type
 * names are snake_case; a type name is converted the way Windmill's TypeScript parser does
 * (convert_case's snake case, then digits joined to the word before): `PostgresqlConn` ->
 * `postgresql_conn`, `S3Bucket` -> `s3_bucket`, `HTTPRequest` -> `http_request`, `postgresql` stays.
 */
export function resourceTypeOf(typeName: string): string {
  // Words: a run of capitals not followed by lower case (an acronym: `HTTP` of `HTTPRequest`),
  // an optionally capitalised lower-case run, or a run of digits; `_`, `-` and spaces only split.
  const words = typeName.match(/\p{Lu}+(?!\p{Ll})|\p{Lu}?\p{Ll}+|\p{N}+/gu);
  if (!words) return typeName.toLowerCase(); // `_`: no word to keep, nothing better to say
  return words
    .map((word) => word.toLowerCase())
    .join('_')
    .replace(/_(\d)/g, '$1');
}
