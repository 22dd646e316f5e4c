import type TS from 'typescript';
import { ts } from '../common/typescript-compiler.js';
import { recordOf, schemaOfValue, type ParamInfo, type PropertySchema } from './build.js';
import { NoMainError, SchemaInferenceError } from './errors.js';
import { propertyName, typeToSchema, type TypeContext } from './typescript-types.js';

type FunctionLike = TS.FunctionDeclaration | TS.ArrowFunction | TS.FunctionExpression;

/** Reads the parameters of the exported `main` of a TypeScript (bun, deno, nativets) script. */
export function typeScriptParams(content: string): ParamInfo[] {
  const file = ts.createSourceFile('main.ts', content, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const main = findMain(file);
  const ctx: TypeContext = { aliases: collectAliases(file), resolving: new Set() };
  const params: ParamInfo[] = [];
  main.parameters.forEach((param, index) => {
    if (ts.isIdentifier(param.name) && param.name.text === 'this') return; // a type annotation only
    // A rest parameter has no name the caller could pass a value under.
    if (param.dotDotDotToken) return;
    params.push(readParam(param, index + 1, ctx));
  });
  return params;
}

function readParam(param: TS.ParameterDeclaration, position: number, ctx: TypeContext): ParamInfo {
  if (!ts.isIdentifier(param.name)) {
    throw new SchemaInferenceError(
      `cannot parse parameter ${position} of main: destructured parameters have no name to take an ` +
        'input under; declare one named parameter per input instead',
    );
  }
  const name = param.name.text;
  let optional = param.questionToken !== undefined;
  let schema: PropertySchema = {};
  if (param.type) {
    const typed = typeToSchema(param.type, ctx);
    schema = typed.schema;
    optional ||= typed.optional;
  }
  if (param.initializer) {
    // Any default makes the input optional; only a literal one can be shown as a JSON default.
    optional = true;
    const value = literalValue(param.initializer);
    if (value !== NOT_LITERAL) {
      if (!param.type) schema = schemaOfValue(value);
      schema = { ...schema, default: value };
    }
  }
  return { name, schema, required: !optional };
}

/**
 * Windmill runs the module's named export `main`: `export [async] function main`, `export const
 * main = [async] (…) => …` / `function (…) {…}`, or a local function exported as `export { main }`.
 */
function findMain(file: TS.SourceFile): FunctionLike {
  const locals = new Map<string, FunctionLike | 'not-a-function'>();
  const exported = new Map<string, FunctionLike | 'not-a-function'>();
  const exportedNames = new Map<string, string>(); // exported name -> local name
  for (const statement of file.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name) {
      const target = isNamedExport(statement) ? exported : locals;
      // The first declaration with a body is the implementation (the others are overloads).
      const previous = target.get(statement.name.text);
      if (!previous || (previous !== 'not-a-function' && !previous.body && statement.body)) {
        target.set(statement.name.text, statement);
      }
    } else if (ts.isVariableStatement(statement)) {
      const target = isNamedExport(statement) ? exported : locals;
      for (const decl of statement.declarationList.declarations) {
        if (ts.isIdentifier(decl.name)) target.set(decl.name.text, functionOf(decl.initializer));
      }
    } else if (ts.isExportDeclaration(statement) && !statement.moduleSpecifier && statement.exportClause) {
      if (ts.isNamedExports(statement.exportClause)) {
        for (const spec of statement.exportClause.elements) {
          exportedNames.set(spec.name.text, (spec.propertyName ?? spec.name).text);
        }
      }
    }
  }
  const localName = exportedNames.get('main');
  const main = exported.get('main') ?? (localName === undefined ? undefined : locals.get(localName));
  if (main === 'not-a-function') throw new SchemaInferenceError('the exported main is not a function');
  if (main) return main;
  if (locals.has('main')) {
    throw new SchemaInferenceError('main is not exported: declare it as `export async function main(…)`');
  }
  throw new NoMainError('no main function found: export one, e.g. `export async function main(…)`');
}

function isNamedExport(node: TS.FunctionDeclaration | TS.VariableStatement): boolean {
  const modifiers = ts.getModifiers(node) ?? [];
  const has = (kind: TS.SyntaxKind) => modifiers.some((m) => m.kind === kind);
  return has(ts.SyntaxKind.ExportKeyword) && !has(ts.SyntaxKind.DefaultKeyword);
}

function functionOf(init: TS.Expression | undefined): FunctionLike | 'not-a-function' {
  const expr = init && unwrap(init);
  return expr && (ts.isArrowFunction(expr) || ts.isFunctionExpression(expr)) ? expr : 'not-a-function';
}

/** `(x)`, `x as T`, `x satisfies T` and `<T>x` do not change the value. */
function unwrap(expr: TS.Expression): TS.Expression {
  while (
    ts.isParenthesizedExpression(expr) ||
    ts.isAsExpression(expr) ||
    ts.isSatisfiesExpression(expr) ||
    ts.isTypeAssertionExpression(expr)
  ) {
    expr = expr.expression;
  }
  return expr;
}

function collectAliases(file: TS.SourceFile): Map<string, TS.TypeNode> {
  const aliases = new Map<string, TS.TypeNode>();
  for (const statement of file.statements) {
    if (ts.isTypeAliasDeclaration(statement) && !statement.typeParameters) {
      aliases.set(statement.name.text, statement.type);
    }
  }
  return aliases;
}

const NOT_LITERAL = Symbol('not a literal');

/** The JSON value of a default written as a literal; anything computed is NOT_LITERAL. */
function literalValue(node: TS.Expression): unknown {
  const expr = unwrap(node);
  if (ts.isStringLiteral(expr) || ts.isNoSubstitutionTemplateLiteral(expr)) return expr.text;
  if (ts.isNumericLiteral(expr)) return finite(Number(expr.text));
  if (expr.kind === ts.SyntaxKind.TrueKeyword) return true;
  if (expr.kind === ts.SyntaxKind.FalseKeyword) return false;
  if (expr.kind === ts.SyntaxKind.NullKeyword) return null;
  if (ts.isPrefixUnaryExpression(expr) && ts.isNumericLiteral(unwrap(expr.operand))) {
    const n = Number((unwrap(expr.operand) as TS.NumericLiteral).text);
    if (expr.operator === ts.SyntaxKind.MinusToken) return finite(-n);
    if (expr.operator === ts.SyntaxKind.PlusToken) return finite(n);
  }
  if (ts.isArrayLiteralExpression(expr)) {
    const items = expr.elements.map((e) => (ts.isSpreadElement(e) || ts.isOmittedExpression(e) ? NOT_LITERAL : literalValue(e)));
    return items.includes(NOT_LITERAL) ? NOT_LITERAL : items;
  }
  if (ts.isObjectLiteralExpression(expr)) {
    const entries: [string, unknown][] = [];
    for (const prop of expr.properties) {
      const key = ts.isPropertyAssignment(prop) ? propertyName(prop.name) : undefined;
      const value = key === undefined ? NOT_LITERAL : literalValue((prop as TS.PropertyAssignment).initializer);
      if (value === NOT_LITERAL) return NOT_LITERAL;
      entries.push([key as string, value]);
    }
    return recordOf(entries);
  }
  return NOT_LITERAL;
}

function finite(n: number): number | typeof NOT_LITERAL {
  return Number.isFinite(n) ? n : NOT_LITERAL;
}
