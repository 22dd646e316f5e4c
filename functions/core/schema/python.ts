import { mergeUnion, resourceSchema, resourceTypeOf, type ParamInfo, type PropertySchema } from './build.js';
import { SchemaInferenceError } from './errors.js';
import { literalValue, NOT_LITERAL, parseExpr, type PyExpr } from './python-expr.js';
import { tokenize, type PyToken } from './python-lexer.js';

/** Reads the parameters of the top-level `def main(…)` / `async def main(…)` of a Python script. */
export function pythonParams(content: string): ParamInfo[] {
  const params: ParamInfo[] = [];
  mainSignature(content).forEach((segment, index) => {
    const param = readParam(segment, index + 1);
    if (param) params.push(param);
  });
  return params;
}

const OPEN = new Set(['(', '[', '{']);
const CLOSE = new Set([')', ']', '}']);
const isOp = (token: PyToken | undefined, text: string) => token?.kind === 'op' && token.text === text;

/**
 * The tokens of each parameter of main, split on the commas between parameters. Only a `def`
 * at the start of an unindented line counts: a `main` method of a class is not the entry point.
 */
function mainSignature(content: string): PyToken[][] {
  const tokens = tokenize(content);
  let depth = 0;
  let prev: PyToken | undefined;
  for (const token of tokens) {
    const startsLine = token.col === 0 || (prev?.text === 'async' && prev.col === 0 && prev.line === token.line);
    if (depth === 0 && token.kind === 'name' && token.text === 'def' && startsLine) {
      const name = tokens.next().value as PyToken | undefined;
      if (name?.text === 'main') {
        if (!isOp(tokens.next().value as PyToken | undefined, '(')) {
          throw new SchemaInferenceError('cannot parse the signature of main: expected "(" after "def main"');
        }
        return splitParameters(tokens);
      }
      prev = name;
      continue;
    }
    if (token.kind === 'op' && OPEN.has(token.text)) depth++;
    if (token.kind === 'op' && CLOSE.has(token.text)) depth = Math.max(0, depth - 1);
    prev = token;
  }
  throw new SchemaInferenceError('no main function found: define one at the top level, e.g. `def main(name: str):`');
}

function splitParameters(tokens: Iterator<PyToken>): PyToken[][] {
  const segments: PyToken[][] = [[]];
  let depth = 1;
  // A lambda default has commas of its own before its `:` (`f=lambda a, b: a`).
  let inLambda = false;
  for (let next = tokens.next(); !next.done; next = tokens.next()) {
    const token = next.value;
    if (token.kind === 'op' && OPEN.has(token.text)) depth++;
    if (token.kind === 'op' && CLOSE.has(token.text) && --depth === 0) {
      return segments.filter((s) => s.length > 0); // a trailing comma leaves an empty one
    }
    if (depth === 1 && token.kind === 'name' && token.text === 'lambda') inLambda = true;
    if (depth === 1 && inLambda && isOp(token, ':')) inLambda = false;
    if (depth === 1 && !inLambda && isOp(token, ',')) segments.push([]);
    else segments[segments.length - 1].push(token);
  }
  throw new SchemaInferenceError('cannot parse the signature of main: missing ")"');
}

/** One parameter: `name`, `name: annotation`, `name = default`, `name: annotation = default`. */
function readParam(tokens: PyToken[], position: number): ParamInfo | undefined {
  const [first, second] = tokens;
  // `*args`, `**kwargs`, and the bare `*` / `/` markers take no named input.
  if (isOp(first, '*') || isOp(first, '**') || isOp(first, '/')) return undefined;
  const fail = (why: string): never => {
    throw new SchemaInferenceError(`cannot parse parameter ${position} of main: ${why}`);
  };
  if (first.kind !== 'name') fail(`expected a parameter name, found "${first.text}"`);
  const name = first.text;
  let annotation: PyToken[] = [];
  let defaultTokens: PyToken[] | undefined;
  if (isOp(second, ':')) {
    const eq = topLevelEquals(tokens);
    annotation = tokens.slice(2, eq === -1 ? undefined : eq);
    if (eq !== -1) defaultTokens = tokens.slice(eq + 1);
    if (annotation.length === 0) fail(`"${name}" has an empty annotation`);
  } else if (isOp(second, '=')) {
    defaultTokens = tokens.slice(2);
  } else if (second) {
    fail(`unexpected "${second.text}" after "${name}"`);
  }
  if (defaultTokens?.length === 0) fail(`"${name}" has an empty default`);

  const typed = annotation.length > 0 ? annotationSchema(parseExpr(annotation)) : { schema: {}, optional: false };
  let schema = typed.schema;
  if (defaultTokens) {
    const expr = parseExpr(defaultTokens);
    if (annotation.length === 0) schema = valueSchema(expr);
    const value = literalValue(expr);
    // A computed default (`datetime.now()`) still makes the input optional, it just has no JSON form.
    if (value !== NOT_LITERAL) schema = { ...schema, default: value };
  }
  return { name, schema, required: !typed.optional && !defaultTokens };
}

/** Index of the `=` that starts the default, skipping any inside brackets of the annotation. */
function topLevelEquals(tokens: PyToken[]): number {
  let depth = 0;
  for (const [i, t] of tokens.entries()) {
    if (t.kind === 'op' && OPEN.has(t.text)) depth++;
    if (t.kind === 'op' && CLOSE.has(t.text)) depth--;
    if (depth === 0 && isOp(t, '=')) return i;
  }
  return -1;
}

interface TypedSchema {
  schema: PropertySchema;
  /** `Optional[X]`, `X | None`: the caller may leave the input out. */
  optional: boolean;
}

const SIMPLE_TYPES: Record<string, PropertySchema> = {
  str: { type: 'string' },
  int: { type: 'integer' },
  float: { type: 'number' },
  bool: { type: 'boolean' },
  bytes: { type: 'string', contentEncoding: 'base64' },
  datetime: { type: 'string', format: 'date-time' },
  date: { type: 'string', format: 'date' },
  dict: { type: 'object' },
  Dict: { type: 'object' },
  Mapping: { type: 'object' },
  Any: {},
  object: {},
};
const ARRAY_TYPES = new Set(['list', 'List', 'Sequence', 'Iterable', 'set', 'Set', 'frozenset', 'FrozenSet', 'tuple', 'Tuple']);
/**
 * Builtins, typing and standard-library names that say nothing a form could use: every other name
 * is a resource type (below), so these must not be taken for one.
 */
const UNTYPED_NAMES = new Set([
  'complex', 'bytearray', 'memoryview', 'range', 'slice', 'type', 'Type', 'callable', 'Callable', 'Iterator',
  'Generator', 'AsyncIterator', 'AsyncIterable', 'AsyncGenerator', 'Awaitable', 'Coroutine', 'Collection',
  'MutableMapping', 'MutableSequence', 'TypeVar', 'TypeAlias', 'Self', 'NoReturn', 'Never', 'Final', 'ClassVar',
  'TypedDict', 'NamedTuple', 'Enum', 'Decimal', 'UUID', 'Path', 'time', 'timedelta', 'timezone', 'Pattern', 'Match',
]);

const plain = (schema: PropertySchema): TypedSchema => ({ schema, optional: false });

function annotationSchema(expr: PyExpr, nesting = 0): TypedSchema {
  switch (expr.kind) {
    case 'const':
      return { schema: {}, optional: expr.value === null };
    case 'name':
      return plain(namedType(baseName(expr.name)));
    case 'union':
      return unionOf(expr.members.map((m) => annotationSchema(m, nesting)));
    case 'str':
      // A quoted forward reference: `db: "Postgresql"`.
      if (expr.value === undefined || nesting > 3) return plain({});
      return annotationSchema(forwardReference(expr.value), nesting + 1);
    case 'subscript':
      return expr.target.kind === 'name' ? genericType(baseName(expr.target.name), expr.args, nesting) : plain({});
    default:
      return plain({});
  }
}

/** A quoted annotation that is not even Python (`x: "it's"`) says nothing about the type. */
function forwardReference(text: string): PyExpr {
  try {
    return parseExpr([...tokenize(text)]);
  } catch {
    return { kind: 'other' };
  }
}

/** `typing.List` and `datetime.datetime` are looked up by their last part. */
const baseName = (dotted: string) => dotted.slice(dotted.lastIndexOf('.') + 1);

function namedType(name: string): PropertySchema {
  if (Object.hasOwn(SIMPLE_TYPES, name)) return { ...SIMPLE_TYPES[name] };
  if (ARRAY_TYPES.has(name)) return { type: 'array' };
  if (UNTYPED_NAMES.has(name)) return {};
  // As in Windmill, any other name asks for a resource of that type, declared or not: the
  // convention is `class postgresql(TypedDict): ...` then `db: postgresql`.
  return resourceSchema(resourceTypeOf(name));
}

function genericType(name: string, args: PyExpr[], nesting: number): TypedSchema {
  switch (name) {
    case 'Optional':
      return { schema: args[0] ? annotationSchema(args[0], nesting).schema : {}, optional: true };
    case 'Union':
      return unionOf(args.map((a) => annotationSchema(a, nesting)));
    case 'Annotated':
      return args[0] ? annotationSchema(args[0], nesting) : plain({});
    case 'Literal':
      return literalType(args);
  }
  if (!ARRAY_TYPES.has(name)) return plain(namedType(name));
  // `Tuple[int, ...]` and `List[int]` have one item type; `Tuple[int, str]` only when alike.
  const itemArgs = args.filter((a) => a.kind !== 'ellipsis');
  const items = mergeUnion(itemArgs.map((a) => annotationSchema(a, nesting).schema));
  return plain(itemArgs.length > 0 && Object.keys(items).length > 0 ? { type: 'array', items } : { type: 'array' });
}

function unionOf(members: TypedSchema[]): TypedSchema {
  const optional = members.some((m) => m.optional);
  const rest = members.filter((m) => !(m.optional && Object.keys(m.schema).length === 0));
  return { schema: mergeUnion(rest.map((m) => m.schema)), optional };
}

function literalType(args: PyExpr[]): TypedSchema {
  const values = args.map((a) => (a.kind === 'const' && a.value === null ? NOT_LITERAL : literalValue(a)));
  const optional = args.some((a) => a.kind === 'const' && a.value === null);
  const enumValues = values.filter((v) => v !== NOT_LITERAL);
  const types = new Set(args.filter((a) => a.kind !== 'const' || a.value !== null).map((a) => valueSchema(a).type));
  const [type] = types;
  if (enumValues.length === 0) return { schema: {}, optional };
  return { schema: types.size === 1 && type ? { type, enum: enumValues } : { enum: enumValues }, optional };
}

/** The type of an unannotated parameter, read off its default: `retries=3` is an integer. */
function valueSchema(expr: PyExpr): PropertySchema {
  switch (expr.kind) {
    case 'str':
      return expr.value === undefined ? {} : { type: 'string' };
    case 'int':
      return { type: 'integer' };
    case 'float':
      return { type: 'number' };
    case 'const':
      return expr.value === null ? {} : { type: 'boolean' };
    case 'dict':
      return { type: 'object' };
    case 'list':
    case 'tuple':
    case 'set': {
      const itemTypes = new Set(expr.items.map((i) => valueSchema(i).type));
      const [only] = itemTypes;
      const primitive = itemTypes.size === 1 && typeof only === 'string' && only !== 'array' && only !== 'object';
      return primitive ? { type: 'array', items: { type: only } } : { type: 'array' };
    }
    default:
      return {};
  }
}
