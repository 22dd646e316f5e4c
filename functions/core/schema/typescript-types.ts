import type TS from 'typescript';
import { ts } from '../common/typescript-compiler.js';
import { mergeUnion, recordOf, resourceSchema, resourceTypeOf, type PropertySchema } from './build.js';

export interface TypeContext {
  /** Top-level `type X = …` of the script, so `p: X` can see what X stands for. */
  aliases: ReadonlyMap<string, TS.TypeNode>;
  /** Aliases being expanded right now: a recursive alias stops expanding instead of looping. */
  resolving: Set<string>;
}

export interface TypedSchema {
  schema: PropertySchema;
  /** The type admits `undefined` or `null`, so a caller may leave the input out. */
  optional: boolean;
}

const DATE_TIME: PropertySchema = { type: 'string', format: 'date-time' };

/** Global types that carry no resource meaning; what a form can do with them is given here. */
const BUILT_IN: Record<string, PropertySchema> = {
  Date: DATE_TIME,
  String: { type: 'string' },
  Number: { type: 'number' },
  Boolean: { type: 'boolean' },
  Object: { type: 'object' },
  Record: { type: 'object' },
  Partial: { type: 'object' },
  Required: { type: 'object' },
  Pick: { type: 'object' },
  Omit: { type: 'object' },
  ...recordOf(
    [
      'Promise', 'Map', 'Set', 'WeakMap', 'WeakSet', 'Exclude', 'Extract', 'NonNullable', 'ReturnType',
      'Parameters', 'Awaited', 'Function', 'RegExp', 'Error', 'Symbol', 'BigInt', 'Uint8Array', 'ArrayBuffer',
      'Blob', 'File', 'Buffer', 'URL', 'Iterable', 'AsyncIterable', 'Generator', 'AsyncGenerator', 'JSON',
    ].map((name) => [name, {}] as const),
  ),
};

export function typeToSchema(node: TS.TypeNode, ctx: TypeContext): TypedSchema {
  const plain = (schema: PropertySchema): TypedSchema => ({ schema, optional: false });
  switch (node.kind) {
    case ts.SyntaxKind.StringKeyword:
      return plain({ type: 'string' });
    case ts.SyntaxKind.NumberKeyword:
      return plain({ type: 'number' });
    case ts.SyntaxKind.BigIntKeyword:
      return plain({ type: 'integer' });
    case ts.SyntaxKind.BooleanKeyword:
      return plain({ type: 'boolean' });
    case ts.SyntaxKind.ObjectKeyword:
      return plain({ type: 'object' });
    case ts.SyntaxKind.UndefinedKeyword:
    case ts.SyntaxKind.VoidKeyword:
      return { schema: {}, optional: true };
  }
  if (ts.isParenthesizedTypeNode(node)) return typeToSchema(node.type, ctx);
  // `readonly T[]` is still an array on the wire.
  if (ts.isTypeOperatorNode(node) && node.operator === ts.SyntaxKind.ReadonlyKeyword) return typeToSchema(node.type, ctx);
  if (ts.isArrayTypeNode(node)) return plain(arrayOf(node.elementType, ctx));
  if (ts.isTupleTypeNode(node)) return plain({ type: 'array' });
  if (ts.isTemplateLiteralTypeNode(node)) return plain({ type: 'string' });
  if (ts.isLiteralTypeNode(node)) return literalType(node);
  if (ts.isUnionTypeNode(node)) return unionType(node, ctx);
  if (ts.isTypeLiteralNode(node)) return plain(objectType(node.members, ctx));
  if (ts.isMappedTypeNode(node)) return plain({ type: 'object' });
  if (ts.isTypeReferenceNode(node)) return typeReference(node, ctx);
  return plain({});
}

function arrayOf(element: TS.TypeNode | undefined, ctx: TypeContext): PropertySchema {
  const items = element ? typeToSchema(element, ctx).schema : {};
  return Object.keys(items).length > 0 ? { type: 'array', items } : { type: 'array' };
}

function literalType(node: TS.LiteralTypeNode): TypedSchema {
  const lit = node.literal;
  if (lit.kind === ts.SyntaxKind.NullKeyword) return { schema: {}, optional: true };
  if (lit.kind === ts.SyntaxKind.TrueKeyword || lit.kind === ts.SyntaxKind.FalseKeyword) {
    return { schema: { type: 'boolean' }, optional: false };
  }
  if (ts.isStringLiteral(lit) || ts.isNoSubstitutionTemplateLiteral(lit)) {
    return { schema: { type: 'string', enum: [lit.text] }, optional: false };
  }
  if (ts.isNumericLiteral(lit)) return { schema: { type: 'number', enum: [Number(lit.text)] }, optional: false };
  if (ts.isPrefixUnaryExpression(lit) && lit.operator === ts.SyntaxKind.MinusToken && ts.isNumericLiteral(lit.operand)) {
    return { schema: { type: 'number', enum: [-Number(lit.operand.text)] }, optional: false };
  }
  return { schema: {}, optional: false };
}

/** `T | undefined` and `T | null` are T, left out by the caller. */
function unionType(node: TS.UnionTypeNode, ctx: TypeContext): TypedSchema {
  let optional = false;
  const members: PropertySchema[] = [];
  for (const member of node.types) {
    const typed = typeToSchema(member, ctx);
    if (typed.optional && Object.keys(typed.schema).length === 0) optional = true;
    else members.push(typed.schema);
    optional ||= typed.optional;
  }
  return { schema: mergeUnion(members), optional };
}

function objectType(members: TS.NodeArray<TS.TypeElement>, ctx: TypeContext): PropertySchema {
  const properties: [string, PropertySchema][] = [];
  const required: string[] = [];
  for (const member of members) {
    if (!ts.isPropertySignature(member)) continue; // methods and index signatures are not data
    const key = propertyName(member.name);
    if (key === undefined) continue;
    const typed = member.type ? typeToSchema(member.type, ctx) : { schema: {}, optional: false };
    properties.push([key, typed.schema]);
    if (!member.questionToken && !typed.optional) required.push(key);
  }
  const schema: PropertySchema = { type: 'object', properties: recordOf(properties) };
  if (required.length > 0) schema.required = required;
  return schema;
}

export function propertyName(name: TS.PropertyName): string | undefined {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  return undefined;
}

/**
 * A named type is either a global we know, an alias in the script that stands for plain data
 * (`type Mode = 'fast' | 'slow'`), or - as in Windmill - a resource type: `db: Postgresql` asks
 * for a resource of type `postgresql`, whatever the alias says its fields are.
 */
function typeReference(node: TS.TypeReferenceNode, ctx: TypeContext): TypedSchema {
  const name = ts.isIdentifier(node.typeName) ? node.typeName.text : node.typeName.right.text;
  const args = node.typeArguments ?? [];
  const plain = (schema: PropertySchema): TypedSchema => ({ schema, optional: false });
  if (name === 'Array' || name === 'ReadonlyArray') return plain(arrayOf(args[0], ctx));
  if (name === 'Readonly' && args[0]) return typeToSchema(args[0], ctx);
  // Windmill's client spells a resource parameter `Resource<'postgresql'>`: the type, as written.
  if (name === 'Resource' && args[0] && ts.isLiteralTypeNode(args[0]) && ts.isStringLiteral(args[0].literal)) {
    return plain(resourceSchema(args[0].literal.text));
  }
  if (Object.hasOwn(BUILT_IN, name)) return plain({ ...BUILT_IN[name] });
  const alias = ctx.aliases.get(name);
  if (alias && args.length === 0 && !ctx.resolving.has(name)) {
    ctx.resolving.add(name);
    try {
      const typed = typeToSchema(alias, ctx);
      const isData = Object.keys(typed.schema).length > 0 && typed.schema.type !== 'object';
      if (isData) return typed;
    } finally {
      ctx.resolving.delete(name);
    }
  }
  return plain(resourceSchema(resourceTypeOf(name)));
}
