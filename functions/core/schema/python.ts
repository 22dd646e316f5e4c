import { mergeUnion, resourceSchema, resourceTypeOf, type ParamInfo, type PropertySchema } from './build.js';
import { SchemaInferenceError } from './errors.js';
import { literalValue, NOT_LITERAL, type PyExpr } from './python-literals.js';
import { mainParameters, parseExpression, type RawParam } from './python-syntax.js';

/** Reads the parameters of the top-level `def main(…)` / `async def main(…)` of a Python script. */
export function pythonParams(content: string): ParamInfo[] {
  return mainParameters(content).map(toParam);
}

function toParam({ name, annotation, defaultExpr }: RawParam): ParamInfo {
  const typed = annotation ? annotationSchema(annotation) : { schema: {}, optional: false };
  let schema = typed.schema;
  if (defaultExpr) {
    if (!annotation) schema = valueSchema(defaultExpr);
    const value = literalValue(defaultExpr);
    // A computed default (`datetime.now()`) still makes the input optional, it just has no JSON form.
    if (value !== NOT_LITERAL) schema = { ...schema, default: value };
  }
  return { name, schema, required: !typed.optional && !defaultExpr };
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
      return annotationSchema(parseExpression(expr.value), nesting + 1);
    case 'subscript':
      return expr.target.kind === 'name' ? genericType(baseName(expr.target.name), expr.args, nesting) : plain({});
    default:
      return plain({});
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
