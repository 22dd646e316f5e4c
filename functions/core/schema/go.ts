import type { SyntaxNode } from '@lezer/common';
import type * as LezerGo from '@lezer/go';
import { onFirstUse, requireHere } from '../common/on-first-use.js';
import { recordOf, type ParamInfo, type PropertySchema } from './build.js';
import { SchemaInferenceError } from './errors.js';

/** The parser, loaded with the first Go script read (on-first-use.ts). */
const lezerGo = onFirstUse(() => (typeof require === 'function' ? require('@lezer/go') : requireHere('@lezer/go')) as typeof LezerGo);

/**
 * Go scripts (Windmill's convention): a package with a function `main` taking typed parameters and
 * returning `(T, error)`. The runner decodes the JSON arguments into those parameters by name, so
 * the schema is read from the signature: Go's types say exactly what JSON each input accepts.
 */

/** The file name a Go script's errors are reported against (the runner compiles it under it). */
export const GO_SCRIPT_FILE = 'main.go';

/** One parameter of `main` as written: its name and the source text of its type. */
export interface GoParam {
  name: string;
  type: string;
}

/** What the runner needs from the source to build a script: where the package name is, main's parameters, the imports. */
export interface GoSignature {
  packageName: string;
  /** Offsets of the package name, which the build renames when it is `main` (a program cannot be imported). */
  packageNameFrom: number;
  packageNameTo: number;
  params: GoParam[];
  imports: string[];
}

export function goParams(content: string): ParamInfo[] {
  goSignature(content); // refuses what cannot be built, with the reason
  const top = lezerGo.parser.parse(content).topNode;
  const types = declaredTypes(top, content);
  // A pointer parameter may be left out: it is then nil.
  return paramsOf(mainFunction(top, content), content).map(({ name, typeNode }) => ({
    name,
    schema: typeSchema(typeNode, content, types, new Set()),
    required: typeNode.name !== 'PointerType',
  }));
}

/** Where the first syntax error of a Go source is, or null when it parses. */
export function goSyntaxError(content: string): { line: number; column: number } | null {
  const error = firstError(lezerGo.parser.parse(content).topNode);
  return error === null ? null : lineAndColumn(content, error);
}

/** @throws SchemaInferenceError on a syntax error (with its line and column) or a `main` the runner cannot call. */
export function goSignature(content: string): GoSignature {
  const top = lezerGo.parser.parse(content).topNode;
  const error = goSyntaxError(content);
  if (error !== null) throw new SchemaInferenceError(`${GO_SCRIPT_FILE}:${error.line}:${error.column}: syntax error`);
  const pkg = top.getChild('PackageClause')?.getChild('DefName');
  if (!pkg) throw new SchemaInferenceError(`${GO_SCRIPT_FILE}: a Go script starts with a package clause, e.g. "package inner"`);
  const main = mainFunction(top, content);
  const results = main.getChildren('Parameters')[1];
  const resultTypes = results ? results.getChildren('Parameter').map((p) => text(content, p.lastChild)) : [];
  if (resultTypes.length !== 2 || resultTypes[1] !== 'error') {
    throw new SchemaInferenceError('main must return two values, (T, error): its result as JSON and its error');
  }
  return {
    packageName: text(content, pkg),
    packageNameFrom: pkg.from,
    packageNameTo: pkg.to,
    params: paramsOf(main, content).map(({ name, typeNode }) => ({ name, type: text(content, typeNode) })),
    imports: top.getChildren('ImportDecl').flatMap((decl) => decl.getChildren('ImportSpec').concat(decl.getChild('SpecList')?.getChildren('ImportSpec') ?? []))
      .map((spec) => JSON.parse(text(content, spec.getChild('String')).replace(/^`|`$/g, '"')) as string),
  };
}

function mainFunction(top: SyntaxNode, content: string): SyntaxNode {
  const mains = top.getChildren('FunctionDecl').filter((f) => f.getChild('DefName') && text(content, f.getChild('DefName')) === 'main');
  if (mains.length === 0) throw new SchemaInferenceError('a Go script needs a top-level function main');
  if (mains[0].getChild('TypeParams')) throw new SchemaInferenceError('main cannot have type parameters');
  return mains[0];
}

function paramsOf(main: SyntaxNode, content: string): { name: string; typeNode: SyntaxNode }[] {
  const params = main.getChildren('Parameters')[0]?.getChildren('Parameter') ?? [];
  return params.flatMap((p) => {
    const names = p.getChildren('DefName');
    const typeNode = p.lastChild!;
    if (names.length === 0) throw new SchemaInferenceError(`every parameter of main needs a name (found "${text(content, p)}")`);
    if (p.getChild('...')) throw new SchemaInferenceError('main cannot take variadic parameters');
    return names.map((n) => {
      const name = text(content, n);
      if (name === '_') throw new SchemaInferenceError('every parameter of main needs a name (found "_")');
      return { name, typeNode };
    });
  });
}

const INTEGER_TYPES = new Set(['int', 'int8', 'int16', 'int32', 'int64', 'uint', 'uint8', 'uint16', 'uint32', 'uint64', 'uintptr', 'byte', 'rune']);
const BASIC: Record<string, PropertySchema> = {
  float32: { type: 'number' },
  float64: { type: 'number' },
  string: { type: 'string' },
  bool: { type: 'boolean' },
  any: {},
};

/** The type declarations of the file by name (`type Person struct {…}`), to resolve named parameter types. */
function declaredTypes(top: SyntaxNode, content: string): Map<string, SyntaxNode> {
  const types = new Map<string, SyntaxNode>();
  for (const decl of top.getChildren('TypeDecl')) {
    const specs = decl.getChildren('TypeSpec').concat(decl.getChild('SpecList')?.getChildren('TypeSpec') ?? []);
    for (const spec of specs) {
      const name = spec.getChild('DefName');
      if (name && spec.lastChild && spec.lastChild !== name) types.set(text(content, name), spec.lastChild);
    }
  }
  return types;
}

function typeSchema(node: SyntaxNode, content: string, types: Map<string, SyntaxNode>, resolving: Set<string>): PropertySchema {
  const recurse = (child: SyntaxNode | null) => (child ? typeSchema(child, content, types, resolving) : {});
  switch (node.name) {
    case 'TypeName': {
      const name = text(content, node);
      if (INTEGER_TYPES.has(name)) return { type: 'integer' };
      if (Object.hasOwn(BASIC, name)) return BASIC[name];
      const declared = types.get(name);
      // A type that contains itself (a tree) is described down to where it repeats.
      if (!declared || resolving.has(name)) return declared ? { type: 'object' } : {};
      return typeSchema(declared, content, types, new Set([...resolving, name]));
    }
    case 'QualifiedType':
      return text(content, node) === 'time.Time' ? { type: 'string', format: 'date-time' } : {};
    case 'PointerType':
    case 'ParenthesizedType':
      return recurse(node.lastChild);
    case 'SliceType':
    case 'ArrayType': {
      const element = node.lastChild!;
      // encoding/json reads a []byte from a base64 string.
      if (node.name === 'SliceType' && ['byte', 'uint8'].includes(text(content, element))) return { type: 'string', contentEncoding: 'base64' };
      return { type: 'array', items: recurse(element) };
    }
    case 'MapType':
      return { type: 'object', additionalProperties: recurse(node.lastChild) };
    case 'StructType':
      return structSchema(node, content, types, resolving);
    default:
      // interface{}, funcs, channels, generic instances: nothing a form can use.
      return {};
  }
}

/** Exported fields by their json name, as encoding/json decodes them; `omitempty` and pointers are optional. */
function structSchema(node: SyntaxNode, content: string, types: Map<string, SyntaxNode>, resolving: Set<string>): PropertySchema {
  const properties: [string, PropertySchema][] = [];
  const required: string[] = [];
  for (const field of node.getChild('StructBody')?.getChildren('FieldDecl') ?? []) {
    const names = field.getChildren('FieldName');
    const tag = field.getChild('String');
    const typeNode = tag ? tag.prevSibling : field.lastChild;
    if (!typeNode || names.length === 0) continue; // an embedded field
    const json = tag ? jsonTag(text(content, tag)) : null;
    if (json?.name === '-') continue;
    for (const nameNode of names) {
      const goName = text(content, nameNode);
      if (!/^\p{Lu}/u.test(goName)) continue; // unexported: encoding/json never sets it
      const name = json?.name || goName;
      properties.push([name, typeSchema(typeNode, content, types, resolving)]);
      if (!json?.omitempty && typeNode.name !== 'PointerType') required.push(name);
    }
  }
  return { type: 'object', properties: recordOf(properties), required };
}

function jsonTag(literal: string): { name: string; omitempty: boolean } | null {
  const raw = literal.startsWith('`') ? literal.slice(1, -1) : (JSON.parse(literal) as string);
  const value = /(?:^|\s)json:"([^"]*)"/.exec(raw)?.[1];
  if (value === undefined) return null;
  const [name, ...options] = value.split(',');
  return { name, omitempty: options.includes('omitempty') };
}

function firstError(top: SyntaxNode): number | null {
  let at: number | null = null;
  top.cursor().iterate((n) => {
    if (at !== null) return false;
    if (n.type.isError) at = n.from;
    return undefined;
  });
  return at;
}

function lineAndColumn(content: string, offset: number): { line: number; column: number } {
  const before = content.slice(0, offset).split('\n');
  return { line: before.length, column: before[before.length - 1].length + 1 };
}

function text(content: string, node: SyntaxNode | null): string {
  return node ? content.slice(node.from, node.to) : '';
}
