import type { SyntaxNode } from '@lezer/common';
import type * as LezerPython from '@lezer/python';
import { onFirstUse, requireHere } from '../common/on-first-use.js';
import { NoMainError, SchemaInferenceError } from './errors.js';
import { OTHER, parseNumber, stringParts, stringValue, type PyExpr } from './python-literals.js';

/** The parser, loaded with the first Python script read (on-first-use.ts). */
const lezerPython = onFirstUse(() => (typeof require === 'function' ? require('@lezer/python') : requireHere('@lezer/python')) as typeof LezerPython);

/*
 * Reads main's signature off the syntax tree of @lezer/python (a maintained grammar, pure
 * JavaScript, so the core can use it in both shells without running Python). The grammar
 * recovers from errors by marking them (`⚠` nodes); the reader turns those into messages that
 * name the parameter.
 */

/** One parameter of main as written: its name, and the annotation / default expressions. */
export interface RawParam {
  name: string;
  annotation?: PyExpr;
  defaultExpr?: PyExpr;
}

/** Punctuation and comments: what sits between the expressions of a node. */
const PUNCTUATION = new Set(['(', ')', '[', ']', '{', '}', ',', ':', '.', 'Comment']);

function children(node: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  for (let child = node.firstChild; child; child = child.nextSibling) out.push(child);
  return out;
}

const operands = (node: SyntaxNode) => children(node).filter((c) => !PUNCTUATION.has(c.name));

/**
 * The parameters of the top-level `def main(…)` / `async def main(…)`, decorated or not; `*args`,
 * `**kwargs` and the bare `*` and `/` markers are left out. A `main` method of a class or a
 * nested function is not the entry point.
 */
export function mainParameters(source: string): RawParam[] {
  let { script, errorAt, truncated } = parseScript(source);
  let main = findMain(source, script);
  if (!main && truncated) {
    // main comes after the window: the error was one construct the grammar does not know
    // (newer syntax), not garbage, so the whole script is worth recovering.
    ({ script, errorAt, truncated } = { script: lezerPython.parser.parse(source).topNode, errorAt: source.length, truncated: false });
    main = findMain(source, script);
  }
  if (!main) throw new NoMainError('no main function found: define one at the top level, e.g. `def main(name: str):`');
  const params = main.getChild('ParamList');
  if (!params) throw new SchemaInferenceError('cannot parse the signature of main: expected "(" after "def main"');
  rejectDeepNesting(params);
  rejectUnterminatedStrings(source, script, params.to);
  if (params.lastChild?.name !== ')' && !truncated) throw new SchemaInferenceError('cannot parse the signature of main: missing ")"');
  const parts = segments(params);
  const read = (segs: SyntaxNode[][]) => segs.map((segment, index) => readParam(source, segment, index + 1)).filter((p): p is RawParam => p !== undefined);
  return truncated ? untilError(source, parts, errorAt, read) : read(parts);
}

/**
 * A signature broken for longer than the recovery window: the parameters before the error are
 * read, the one holding it reads as untyped (the error is reported when the script runs), and
 * the garbage after it is dropped.
 */
function untilError(source: string, parts: SyntaxNode[][], errorAt: number, read: (segs: SyntaxNode[][]) => RawParam[]): RawParam[] {
  const before = read(parts.filter((s) => s[s.length - 1].to <= errorAt));
  const broken = parts.find((s) => s[0].from <= errorAt && s[s.length - 1].to > errorAt);
  return broken?.[0].name === 'VariableName' ? [...before, { name: textOf(source, broken[0]), annotation: OTHER }] : before;
}

let strictParser: typeof lezerPython.parser | undefined;
const strict = () => (strictParser ??= lezerPython.parser.configure({ strict: true }));
/** How far past a syntax error the error-recovering parse reads: a signature's worth. */
const RECOVERY_WINDOW = 4096;

/**
 * A script without syntax errors parses strictly, in linear time. Otherwise the grammar's error
 * recovery, whose cost grows with the errors, reads only up to a window past the first error:
 * enough to name the broken parameter of main, or to read a main that comes before the error,
 * and bounded on garbage. `truncated`: the window ends before the script does.
 */
function parseScript(source: string): { script: SyntaxNode; errorAt: number; truncated: boolean } {
  try {
    return { script: strict().parse(source).topNode, errorAt: source.length, truncated: false };
  } catch (err) {
    const at = /No parse at (\d+)/.exec((err as Error).message);
    if (!at) throw err;
    const errorAt = Number(at[1]);
    const end = errorAt + RECOVERY_WINDOW;
    return { script: lezerPython.parser.parse(source.slice(0, end)).topNode, errorAt, truncated: end < source.length };
  }
}

/**
 * Python itself refuses more than 200 nested brackets; far deeper nesting (each bracket is a
 * node or two here) is refused before any recursion over the tree.
 */
const MAX_DEPTH = 1000;
function rejectDeepNesting(node: SyntaxNode): void {
  let depth = 0;
  const cursor = node.cursor();
  for (;;) {
    if (depth > MAX_DEPTH) throw new SchemaInferenceError('cannot read the parameters of main: brackets are nested too deeply');
    if (cursor.firstChild()) {
      depth++;
      continue;
    }
    while (!cursor.nextSibling()) {
      if (depth === 0 || !cursor.parent()) return;
      depth--;
    }
    if (depth === 0) return;
  }
}

function findMain(source: string, script: SyntaxNode): SyntaxNode | undefined {
  return children(script)
    .map((statement) => (statement.name === 'DecoratedStatement' ? statement.getChild('FunctionDefinition') : statement))
    .find((statement): statement is SyntaxNode => statement?.name === 'FunctionDefinition' && textOf(source, statement.getChild('VariableName')) === 'main');
}

/** The nodes of each parameter, split on the commas between parameters. */
function segments(params: SyntaxNode): SyntaxNode[][] {
  const out: SyntaxNode[][] = [[]];
  for (const child of children(params)) {
    if (child.name === '(' || child.name === ')' || child.name === 'Comment') continue;
    if (child.name === ',') out.push([]);
    else out[out.length - 1].push(child);
  }
  // A trailing comma, or the `/` marker (which the grammar leaves out), leaves an empty one.
  return out.filter((s) => s.length > 0);
}

function readParam(source: string, nodes: SyntaxNode[], position: number): RawParam | undefined {
  const fail = (why: string): never => {
    throw new SchemaInferenceError(`cannot parse parameter ${position} of main: ${why}`);
  };
  const [first, ...rest] = nodes;
  if (first.name === '*' || first.name === '**') return undefined;
  if (first.name !== 'VariableName') return fail(`expected a parameter name, found "${textOf(source, first)}"`);
  const name = textOf(source, first);
  // `b:` with nothing after the colon: the grammar marks only a gap, so the colon is looked for.
  if (rest[0]?.name !== 'TypeDef' && /^\s*:/.test(source.slice(first.to))) fail(`"${name}" has an empty annotation`);
  let next = 0;
  let annotation: PyExpr | undefined;
  if (rest[next]?.name === 'TypeDef') {
    const [type] = operands(rest[next++]);
    if (!type || type.type.isError) fail(`"${name}" has an empty annotation`);
    annotation = toExpr(source, type);
  }
  let defaultExpr: PyExpr | undefined;
  if (rest[next]?.name === 'AssignOp') {
    next++;
    const value = rest[next++];
    if (!value || (value.type.isError && value.from === value.to)) fail(`"${name}" has an empty default`);
    defaultExpr = toExpr(source, value);
  }
  if (next < rest.length) fail(`unexpected "${textOf(source, rest[next]).trim() || source.slice(rest[next].from).trim()[0]}" after "${name}"`);
  return { name, annotation, defaultExpr };
}

/** Python refuses an unclosed string anywhere up to main's signature; the grammar recovers. */
function rejectUnterminatedStrings(source: string, script: SyntaxNode, until: number): void {
  const cursor = script.cursor();
  do {
    if (cursor.from >= until) break;
    if ((cursor.name === 'String' || cursor.name === 'FormatString') && !stringParts(source.slice(cursor.from, cursor.to))) {
      const line = source.slice(0, cursor.from).split('\n').length;
      throw new SchemaInferenceError(`cannot read the Python script: unterminated string on line ${line}`);
    }
  } while (cursor.next());
}

/** A quoted annotation (`db: "Postgresql"`) read as the expression it holds. */
export function parseExpression(text: string): PyExpr {
  const script = lezerPython.parser.parse(text).topNode;
  const statements = children(script).filter((c) => c.name !== 'Comment');
  const [statement] = statements;
  if (statements.length !== 1 || statement.name !== 'ExpressionStatement' || hasError(statement)) return OTHER;
  const [expr] = operands(statement);
  return expr ? toExpr(text, expr) : OTHER;
}

function hasError(node: SyntaxNode): boolean {
  const cursor = node.cursor();
  do if (cursor.type.isError) return true;
  while (cursor.next() && cursor.from < node.to);
  return false;
}

const textOf = (source: string, node: SyntaxNode | null) => (node ? source.slice(node.from, node.to) : '');

function toExpr(source: string, node: SyntaxNode): PyExpr {
  switch (node.name) {
    case 'VariableName':
      return { kind: 'name', name: textOf(source, node) };
    case 'Boolean':
      return { kind: 'const', value: textOf(source, node) === 'True' };
    case 'None':
      return { kind: 'const', value: null };
    case 'Ellipsis':
      return { kind: 'ellipsis' };
    case 'Number':
      return parseNumber(textOf(source, node));
    case 'String':
    case 'FormatString':
      return { kind: 'str', value: literalString(source, node) };
    case 'ContinuedString':
      // Adjacent literals concatenate: `"a" 'b'` is `"ab"`.
      return { kind: 'str', value: concatenated(operands(node).map((part) => literalString(source, part))) };
    case 'ParenthesizedExpression': {
      const inner = operands(node);
      return inner.length === 1 ? toExpr(source, inner[0]) : OTHER;
    }
    case 'ArrayExpression':
      return { kind: 'list', items: operands(node).map((c) => toExpr(source, c)) };
    case 'TupleExpression':
      return { kind: 'tuple', items: operands(node).map((c) => toExpr(source, c)) };
    case 'SetExpression':
      return { kind: 'set', items: operands(node).map((c) => toExpr(source, c)) };
    case 'DictionaryExpression':
      return dictionary(source, node);
    case 'MemberExpression':
      return member(source, node);
    case 'UnaryExpression':
      return signed(source, node);
    case 'BinaryExpression':
      return union(source, node);
    default:
      return OTHER;
  }
}

function literalString(source: string, node: SyntaxNode): string | undefined {
  if (node.name === 'FormatString' && node.getChild('FormatReplacement')) return undefined;
  const parts = stringParts(textOf(source, node));
  return parts ? stringValue(parts.prefix, parts.body) : undefined;
}

const concatenated = (values: (string | undefined)[]) => (values.includes(undefined) ? undefined : values.join(''));

function dictionary(source: string, node: SyntaxNode): PyExpr {
  const items = operands(node);
  // `{**other}` has no JSON form here; keys and values otherwise alternate.
  if (items.length % 2 !== 0 || items.some((i) => i.name === '**')) return OTHER;
  const entries: [PyExpr, PyExpr][] = [];
  for (let i = 0; i < items.length; i += 2) entries.push([toExpr(source, items[i]), toExpr(source, items[i + 1])]);
  return { kind: 'dict', entries };
}

/** `typing.List` (a dotted name) or `List[int]` (a subscript). */
function member(source: string, node: SyntaxNode): PyExpr {
  const [target, ...rest] = operands(node);
  const property = node.getChild('PropertyName');
  if (property) {
    const base = toExpr(source, target);
    return base.kind === 'name' ? { kind: 'name', name: `${base.name}.${textOf(source, property)}` } : OTHER;
  }
  if (!node.getChild('[')) return OTHER;
  return { kind: 'subscript', target: toExpr(source, target), args: rest.map((a) => toExpr(source, a)) };
}

function signed(source: string, node: SyntaxNode): PyExpr {
  const [op, operand] = operands(node);
  const sign = textOf(source, op);
  if (!operand || (sign !== '-' && sign !== '+')) return OTHER;
  const value = toExpr(source, operand);
  if (value.kind !== 'int' && value.kind !== 'float') return OTHER;
  return { ...value, value: sign === '-' ? -value.value : value.value };
}

/** `X | None`: the only binary operator an annotation uses. */
function union(source: string, node: SyntaxNode): PyExpr {
  const [left, op, right] = operands(node);
  if (op?.name !== 'BitOp' || textOf(source, op) !== '|' || !right) return OTHER;
  const members = [left, right].flatMap((side) => {
    const expr = toExpr(source, side);
    return expr.kind === 'union' ? expr.members : [expr];
  });
  return { kind: 'union', members };
}
