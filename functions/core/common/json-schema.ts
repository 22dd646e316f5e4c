import { z } from 'zod';
import type * as Re2 from 're2js';
import { re2 } from './re2.js';

/**
 * Validating values with a JSON Schema a member stored (a resource type's, a flow's inputs). zod
 * checks everything but the `pattern`s, which are checked here on RE2: a pattern is the caller's
 * code, and on JavaScript's backtracking engine `^(a+)+$` against 30 characters holds the process,
 * every workspace's requests with it, for seconds (each character more doubles that). RE2 matches
 * in linear time. A pattern RE2 does not take (look-arounds, back-references), and one where
 * this module does not follow values (under `anyOf`, `oneOf`, `not`, `contains`, `propertyNames`, or
 * a `patternProperties` key), makes the schema one this service cannot validate with.
 */

/** Keywords whose value is one subschema, a list of them, or a map of names to them. */
const ONE = ['additionalProperties', 'items', 'additionalItems', 'contains', 'propertyNames', 'not', 'if', 'then', 'else', 'unevaluatedItems', 'unevaluatedProperties'];
const LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'];
const MAP = ['properties', '$defs', 'definitions', 'dependentSchemas'];
/** Where values are followed to check patterns (with `$ref`, into `$defs`/`definitions`). */
const FOLLOWED = new Set(['additionalProperties', 'items', 'additionalItems', 'allOf', 'prefixItems', 'properties', '$defs', 'definitions']);

type Schema = Record<string, unknown>;
type Issue = { path: PropertyKey[]; message: string };

const isSchema = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What splitting a schema gathers: its patterns compiled and the `$ref`s in it. */
interface Split {
  patterns: Map<string, Re2.RE2JS>;
  refs: { ref: string; at: string; followed: boolean }[];
}

/**
 * The schema without its patterns (what zod is given), each pattern compiled; throws an Error
 * naming the keyword when a pattern cannot be checked.
 */
function splitPatterns(schema: Schema, where: string, followed: boolean, split: Split): Schema {
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    const at = `${where}.${key}`;
    const inner = followed && FOLLOWED.has(key);
    if (key === 'pattern') {
      if (value === null || value === undefined) continue;
      if (typeof value !== 'string') throw new Error(`${at}: a pattern must be a string`);
      if (!followed) throw new Error(`${at}: a pattern is only checked under properties, additionalProperties, items, prefixItems, additionalItems, allOf and $defs`);
      if (!split.patterns.has(value)) split.patterns.set(value, compile(value, at));
    } else if (key === 'patternProperties') {
      if (Object.keys(value ?? {}).length > 0) throw new Error(`${at}: patternProperties is not supported; name the properties under properties`);
    } else if (MAP.includes(key) && isSchema(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isSchema(v) ? splitPatterns(v, `${at}.${k}`, inner, split) : v]));
    } else if (LIST.includes(key) && Array.isArray(value)) {
      out[key] = value.map((v, i) => (isSchema(v) ? splitPatterns(v, `${at}.${i}`, inner, split) : v));
    } else if (ONE.includes(key) && isSchema(value)) {
      out[key] = splitPatterns(value, at, inner, split);
    } else {
      if (key === '$ref' && typeof value === 'string') split.refs.push({ ref: value, at, followed });
      out[key] = value;
    }
  }
  return out;
}

/**
 * With patterns, a `$ref` where values are not followed (under `anyOf`, ...) could lead zod to a
 * subschema whose patterns were split off and are not checked there.
 */
function checkRefs(split: Split): void {
  const unfollowed = split.refs.find((r) => !r.followed);
  if (unfollowed && split.patterns.size > 0) {
    throw new Error(`${unfollowed.at}: a schema with patterns may use $ref only under properties, additionalProperties, items, prefixItems, additionalItems, allOf and $defs`);
  }
}

function compile(pattern: string, at: string): Re2.RE2JS {
  try {
    return re2.RE2JS.compile(pattern);
  } catch (e) {
    if (!(e instanceof re2.RE2JSException)) throw e;
    throw new Error(`${at}: a pattern must be a regular expression in RE2 syntax (no look-arounds or back-references): ${e.message}`);
  }
}

/**
 * The first string of `value` that does not match a pattern the schema puts on it. `seen` holds
 * the subschemas already applied to this very value, so a `$ref` cycle (or one subschema reached
 * twice through `allOf`s) is applied once: the work is at most the subschemas times the value's size.
 */
function patternIssue(schema: Schema, value: unknown, path: PropertyKey[], root: Schema, patterns: Map<string, Re2.RE2JS>, seen = new Set<Schema>()): Issue | null {
  if (seen.has(schema)) return null;
  seen.add(schema);
  const target = typeof schema.$ref === 'string' ? resolveRef(root, schema.$ref) : null;
  const issue = target ? patternIssue(target, value, path, root, patterns, seen) : null;
  if (issue) return issue;
  if (typeof schema.pattern === 'string' && typeof value === 'string' && !patterns.get(schema.pattern)!.matcher(value).find()) {
    return { path, message: `Invalid string: must match pattern /${schema.pattern}/` };
  }
  for (const part of Array.isArray(schema.allOf) ? schema.allOf : []) {
    const issue = isSchema(part) ? patternIssue(part, value, path, root, patterns, seen) : null;
    if (issue) return issue;
  }
  if (isSchema(value)) {
    const properties = isSchema(schema.properties) ? schema.properties : {};
    for (const [key, item] of Object.entries(value)) {
      const sub = Object.hasOwn(properties, key) ? properties[key] : schema.additionalProperties;
      const issue = isSchema(sub) ? patternIssue(sub, item, [...path, key], root, patterns) : null;
      if (issue) return issue;
    }
  } else if (Array.isArray(value)) {
    const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : [];
    for (const [i, item] of value.entries()) {
      const sub: unknown = i < prefix.length ? prefix[i] : Array.isArray(schema.items) ? schema.additionalItems : schema.items;
      const issue = isSchema(sub) ? patternIssue(sub, item, [...path, i], root, patterns) : null;
      if (issue) return issue;
    }
  }
  return null;
}

/** The subschema a `$ref` names, as zod resolves it: `#`, or `#/$defs/<name>` (`definitions`); null for any other. */
function resolveRef(root: Schema, ref: string): Schema | null {
  if (ref === '#') return root;
  const [, defs, name] = ref.split('/');
  if (!ref.startsWith('#/') || (defs !== '$defs' && defs !== 'definitions') || !name) return null;
  const named = root[defs];
  const key = name.replaceAll('~1', '/').replaceAll('~0', '~');
  const target = isSchema(named) && Object.hasOwn(named, key) ? named[key] : null;
  return isSchema(target) ? target : null;
}

export interface JsonSchemaValidator {
  /** The first way `value` does not follow the schema (its path and what is wrong), or null. */
  check(value: unknown): Issue | null;
}

/** A validator for `schema`; throws an Error saying why when this service cannot validate with it. */
export function jsonSchemaValidator(schema: object): JsonSchemaValidator {
  const { stripped, patterns } = withoutPatterns(schema as Schema);
  const validator = z.fromJSONSchema(stripped as Parameters<typeof z.fromJSONSchema>[0]);
  return {
    check(value) {
      let parsed;
      try {
        parsed = validator.safeParse(value);
      } catch (e) {
        // A schema that refers to itself without taking a step into the value (`{"$ref": "#"}`).
        if (e instanceof RangeError) return { path: [], message: 'the schema refers to itself without end' };
        throw e;
      }
      if (!parsed.success) return parsed.error.issues[0];
      return patterns.size > 0 ? patternIssue(schema as Schema, value, [], schema as Schema, patterns) : null;
    },
  };
}

/** The schema zod is given, and its patterns compiled; throws when a pattern cannot be checked. */
function withoutPatterns(schema: Schema): { stripped: Schema; patterns: Map<string, Re2.RE2JS> } {
  const split: Split = { patterns: new Map(), refs: [] };
  const stripped = splitPatterns(schema, 'schema', true, split);
  checkRefs(split);
  return { stripped, patterns: split.patterns };
}

const problem = (check: () => unknown): string | null => {
  try {
    check();
    return null;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
};

/** Why this service cannot validate with `schema`, or null when it can. */
export const jsonSchemaProblem = (schema: object): string | null => problem(() => jsonSchemaValidator(schema));

/** Why the patterns of `schema` cannot be checked, or null when they can (what else zod takes is not asked). */
export const jsonSchemaPatternProblem = (schema: object): string | null => problem(() => withoutPatterns(schema as Schema));
