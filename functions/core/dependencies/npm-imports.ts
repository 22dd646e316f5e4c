import { builtinModules } from 'node:module';
import type TS from 'typescript';
import { ts } from '../common/typescript-compiler.js';

/**
 * The npm packages a TypeScript script imports (README: Dependencies). Bare specifiers only:
 * relative and absolute paths, URLs and `node:`/`npm:`/`jsr:` schemes, Node's built-in modules,
 * the built-in `svc-client` and type-only imports need no install; Bun's own modules (`bun`,
 * `bun:sqlite`, ...) are refused. A version may be pinned in the
 * specifier (`"lodash-es@4.17.21"`, `"@scope/pkg@^2/sub"`); the runner imports it without the pin.
 */
export interface NpmImport {
  /** As written in the script. */
  specifier: string;
  /** The package name (`@scope/name` or `name`). */
  name: string;
  /** The range pinned in the specifier, or null. */
  range: string | null;
  /** What Node imports: the specifier without its pin. */
  runtimeSpecifier: string;
  /** Where the specifier's string literal is in the source (quotes included). */
  start: number;
  end: number;
}

/** A specifier that names no valid npm package, or a package pinned two ways; the message names it. */
export class NpmImportError extends Error {}

const BUILT_IN_CLIENTS = new Set(['svc-client']);
const NODE_BUILTINS = new Set(builtinModules);
const NAME_PART = /^[a-z0-9~][a-z0-9._~-]*$/;
const RANGE = /^[0-9A-Za-z.^~<>=*|+ -]{1,64}$/;

/** Every import of `content` that is an npm package, in source order. */
export function npmImports(content: string): NpmImport[] {
  const found: NpmImport[] = [];
  for (const literal of moduleSpecifierLiterals(content)) {
    // Bun's own modules: svc runs these scripts on Node, and the npm package "bun" is Bun's installer.
    if (literal.text === 'bun' || literal.text.startsWith('bun:')) {
      throw new NpmImportError(`import "${literal.text}" is Bun's own module, which svc does not have: svc runs bun scripts on Node (docs/windmill.md)`);
    }
    const parsed = parseBareSpecifier(literal.text);
    if (parsed) found.push({ ...parsed, start: literal.start, end: literal.end });
  }
  return found;
}

/**
 * Every `npm:` import of a `deno` script (`"npm:lodash-es@4"`, `"npm:@scope/pkg@^2/sub"`), in
 * source order: svc installs them as it does a bun script's bare imports, and Deno imports them
 * from that tree. `jsr:`, `https:` and other imports are Deno's own business.
 */
export function denoNpmImports(content: string): NpmImport[] {
  const found: NpmImport[] = [];
  for (const literal of moduleSpecifierLiterals(content)) {
    if (!literal.text.startsWith('npm:')) continue;
    const bare = literal.text.slice('npm:'.length).replace(/^\//, '');
    const parsed = parseBareSpecifier(bare, true);
    if (!parsed) throw new NpmImportError(`import "${literal.text}" is not an npm package name`);
    found.push({ ...parsed, specifier: literal.text, start: literal.start, end: literal.end });
  }
  return found;
}

/**
 * The packages to resolve, by name: the pinned range, or `*` (the registry's latest). Two imports
 * of one package with different pins are refused, since one tree holds one version of it.
 */
export function npmRequirements(imports: NpmImport[]): Record<string, string> {
  const requirements: Record<string, string> = {};
  for (const imp of imports) {
    const range = imp.range ?? '*';
    const before = requirements[imp.name];
    if (before === undefined || before === '*') requirements[imp.name] = range;
    else if (range !== '*' && range !== before) throw new NpmImportError(`${imp.name} is imported with two versions (${before} and ${range}): pin it one way`);
  }
  return requirements;
}

/** The script with each pinned specifier replaced by what Node imports (`lodash-es@4` -> `lodash-es`). */
export function withoutVersionPins(content: string): string {
  const pinned = npmImports(content).filter((i) => i.range !== null);
  let out = content;
  for (const imp of pinned.reverse()) out = `${out.slice(0, imp.start)}${JSON.stringify(imp.runtimeSpecifier)}${out.slice(imp.end)}`;
  return out;
}

/**
 * The package a bare specifier names, or null when it needs no install. `npmScheme`: it came after
 * `npm:`, so it names a package even where a built-in module has the same name (`npm:events`).
 */
export function parseBareSpecifier(specifier: string, npmScheme = false): Omit<NpmImport, 'start' | 'end'> | null {
  if (specifier.startsWith('.') || specifier.startsWith('/') || /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(specifier)) return null;
  const scoped = specifier.startsWith('@');
  const parts = specifier.split('/');
  const head = scoped ? parts.slice(0, 2) : parts.slice(0, 1);
  const rest = parts.slice(head.length);
  const last = head[head.length - 1] ?? '';
  const at = last.indexOf('@');
  const bareLast = at === -1 ? last : last.slice(0, at);
  const range = at === -1 ? null : last.slice(at + 1);
  const name = [...head.slice(0, -1), bareLast].join('/');
  const subpath = rest.length > 0 ? `/${rest.join('/')}` : '';
  if (!npmScheme && (BUILT_IN_CLIENTS.has(name) || (range === null && (NODE_BUILTINS.has(specifier) || NODE_BUILTINS.has(name))))) return null;
  const nameParts = scoped ? [head[0].slice(1), bareLast] : [bareLast];
  if (scoped && head.length < 2) throw new NpmImportError(`import "${specifier}" is not an npm package name`);
  if (!nameParts.every((p) => NAME_PART.test(p)) || name.length > 214) throw new NpmImportError(`import "${specifier}" is not an npm package name`);
  if (range !== null && !RANGE.test(range)) throw new NpmImportError(`import "${specifier}" pins "${range}", which is not an npm version or range`);
  return { specifier, name, range, runtimeSpecifier: name + subpath };
}

export interface SpecifierLiteral {
  text: string;
  start: number;
  end: number;
}

/** The module specifiers of imports and re-exports that load code (type-only ones load none). */
export function moduleSpecifierLiterals(content: string): SpecifierLiteral[] {
  const file = ts.createSourceFile('main.ts', content, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: SpecifierLiteral[] = [];
  const add = (node: TS.Expression | undefined) => {
    if (node && ts.isStringLiteralLike(node)) out.push({ text: node.text, start: node.getStart(file), end: node.end });
  };
  const visit = (node: TS.Node) => {
    if (ts.isImportDeclaration(node)) {
      if (!typeOnlyImport(node.importClause)) add(node.moduleSpecifier);
    } else if (ts.isExportDeclaration(node)) {
      if (!node.isTypeOnly) add(node.moduleSpecifier);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0]);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return out;
}

function typeOnlyImport(clause: TS.ImportClause | undefined): boolean {
  if (!clause) return false;
  if (clause.isTypeOnly) return true;
  const bindings = clause.namedBindings;
  return !clause.name && bindings !== undefined && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
}
