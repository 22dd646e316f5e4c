import { posix } from 'node:path';
import type { InputSchema, Language } from '../../ports.js';
import { inferSchema, JSON_SCHEMA_DRAFT, NoMainError } from '../schema/index.js';
import { moduleSpecifierLiterals } from './npm-imports.js';

/**
 * Workspace imports (docs/workspace-imports.md): a script imports another script of its
 * workspace, as Windmill's scripts do. Python: `from f.folder.name import x`, `import
 * u.user.name`, or relative to the importer's folder (`from .name import x`, `from ..other.name
 * import x`). TypeScript: `"/f/folder/name.ts"` or relative (`"./name.ts"`, `"../other/name.ts"`).
 * This module reads them from the source and lays the files of a job out; resolving them to
 * versions is workspace-resolution.ts, recording them in the lock is lock-header.ts.
 */

/** Which scripts a script may import: Python imports Python; Node's TypeScript imports Node's TypeScript. */
export type ImportFamily = 'python' | 'typescript';

export function importFamily(language: Language): ImportFamily | null {
  if (language === 'python3') return 'python';
  if (language === 'bun' || language === 'nativets') return 'typescript';
  return null;
}

/**
 * A new version's input schema, read from its `main`. A Python or TypeScript script without any
 * `main` that defines something to share (a top-level `def`, `class` or assignment; an `export`)
 * is shared code, as in Windmill: it is kept for other scripts to import, takes no inputs, and a
 * run of it fails saying it has no main. One that shares nothing either is refused as before.
 */
export function inferScriptSchema(language: Language, content: string): InputSchema {
  try {
    return inferSchema(language, content);
  } catch (error) {
    if (error instanceof NoMainError && sharesCode(language, content)) return { $schema: JSON_SCHEMA_DRAFT, type: 'object', properties: {}, required: [], order: [] };
    throw error;
  }
}

function sharesCode(language: Language, content: string): boolean {
  const family = importFamily(language);
  if (family === 'python') return /^(?:(?:async\s+)?def|class)\s|^[A-Za-z_]\w*\s*(?::[^=\n]*)?=[^=]/m.test(content);
  return family === 'typescript' && /^\s*export\s/m.test(content);
}

/** One import of a workspace script, where it is written in the source. */
export interface WorkspaceImport {
  /** The imported script's path (`f/folder/name`). */
  path: string;
  /** As written (`../other/name.ts`, `.name`, `f.folder.name`). */
  specifier: string;
  /** The span to replace when the job's files are laid out (a string literal with its quotes, or a dotted module name). */
  start: number;
  end: number;
}

/** An import that names no script path of the workspace (`../../../x.ts` climbing out of it, say); the message names it. */
export class WorkspaceImportError extends Error {}

/** Where a job's files go: the script as `main`, each imported script at its own path below the code folder. */
export const MODULE_EXTENSION: Record<ImportFamily, string> = { python: '.py', typescript: '.mjs' };

const SEGMENT = /^(?!\.{1,2}$)[A-Za-z0-9_.-]+$/;

/** The workspace scripts `content` imports, in source order; `importerPath` is its own path, for relative imports. */
export function workspaceImports(language: Language, importerPath: string, content: string): WorkspaceImport[] {
  const family = importFamily(language);
  if (family === 'python') return pythonWorkspaceImports(importerPath, content);
  if (family === 'typescript') return typeScriptWorkspaceImports(importerPath, content);
  // Deno resolves its own imports; a relative or rooted one would name a workspace script svc does not provide.
  if (language === 'deno') {
    const local = moduleSpecifierLiterals(content).find((l) => l.text.startsWith('.') || l.text.startsWith('/'));
    if (local) throw new WorkspaceImportError(`import "${local.text}": deno scripts cannot import workspace scripts; make this a bun script to import it`);
  }
  return [];
}

function typeScriptWorkspaceImports(importerPath: string, content: string): WorkspaceImport[] {
  const out: WorkspaceImport[] = [];
  for (const literal of moduleSpecifierLiterals(content)) {
    const spec = literal.text;
    if (!spec.startsWith('/') && !spec.startsWith('./') && !spec.startsWith('../')) continue;
    const bare = spec.replace(/\.ts$/, '');
    const joined = bare.startsWith('/') ? posix.normalize(bare).slice(1) : posix.join(posix.dirname(importerPath), bare);
    out.push({ path: checkedPath(joined, `"${spec}"`), specifier: spec, start: literal.start, end: literal.end });
  }
  return out;
}

/**
 * Python imports, read line by line as the package resolution does (python-imports.ts): a
 * statement split over lines with parentheses keeps its module on the first line.
 */
function pythonWorkspaceImports(importerPath: string, content: string): WorkspaceImport[] {
  const out: WorkspaceImport[] = [];
  let offset = 0;
  for (const line of content.split('\n')) {
    const code = line.replace(/#.*$/, '');
    // (?=\S): the blanks after `from` are all the first group's; else both \s+ could share a long
    // run of blanks every way, quadratic in the run (200,000 blanks held the service 26 s).
    const from = /^(\s*from\s+)(?=\S)(\.*)([A-Za-z_][\w.]*)?(\s+import\b)/.exec(code);
    if (from) {
      const start = offset + from[1].length;
      const dots = from[2];
      const dotted = from[3] ?? '';
      const specifier = dots + dotted;
      if (dots.length > 0) {
        // Relative to the importer's folder, as Windmill reads them: `.` is the folder, each further dot one up.
        if (!dotted) throw new WorkspaceImportError(`from ${specifier} import ...: import a script by name (from .name import x)`);
        const up = Array.from({ length: dots.length - 1 }, () => '..');
        const joined = posix.join(posix.dirname(importerPath), ...up, ...dotted.split('.'));
        out.push({ path: checkedPath(joined, specifier), specifier, start, end: start + specifier.length });
      } else if (/^[fu]\./.test(dotted)) {
        out.push({ path: checkedPath(dotted.split('.').join('/'), specifier), specifier, start, end: start + specifier.length });
      }
    }
    const plain = /^(\s*import\s+)(.+)$/.exec(code);
    if (plain) {
      let at = offset + plain[1].length;
      for (const part of plain[2].split(',')) {
        const name = part.trim().split(/\s+/)[0] ?? '';
        if (/^[fu]\./.test(name)) {
          const start = at + part.indexOf(name);
          out.push({ path: checkedPath(name.split('.').join('/'), name), specifier: name, start, end: start + name.length });
        }
        at += part.length + 1;
      }
    }
    offset += line.length + 1;
  }
  return out;
}

function checkedPath(path: string, written: string): string {
  const parts = path.split('/');
  if (parts.length < 3 || (parts[0] !== 'f' && parts[0] !== 'u') || !parts.every((p) => SEGMENT.test(p)) || path.length > 255) {
    throw new WorkspaceImportError(`import ${written} does not name a script of the workspace (f/<folder>/<name> or u/<user>/<name>)`);
  }
  return path;
}

/** What a job's code folder holds besides the script: file path (below the folder) to source. */
export type JobModules = Record<string, string>;

/**
 * The job's files: the script (its content, with workspace imports pointing into the folder) and
 * each imported script at `<path><ext>`. TypeScript specifiers become relative file paths of the
 * transpiled modules; Python's relative imports become absolute (`f.folder.name`), since the
 * script runs as a module of no package. `imported`: every script of the closure, by path.
 */
export function jobFiles(language: Language, mainPath: string, mainContent: string, imported: ReadonlyMap<string, { content: string }>): { content: string; modules: JobModules } {
  const family = importFamily(language);
  if (!family || imported.size === 0) return { content: mainContent, modules: {} };
  const ext = MODULE_EXTENSION[family];
  const rewrite = (ownPath: string, content: string, placedAt: string) =>
    replaceSpans(content, workspaceImports(language, ownPath, content), (imp) => {
      if (family === 'python') return imp.path.split('/').join('.');
      const target = `${imp.path}${ext}`;
      const relative = posix.relative(placedAt, target);
      return JSON.stringify(relative.startsWith('.') ? relative : `./${relative}`);
    });
  const modules: JobModules = {};
  for (const [path, { content }] of imported) modules[`${path}${ext}`] = rewrite(path, content, posix.dirname(path));
  return { content: rewrite(mainPath, mainContent, '.'), modules };
}

function replaceSpans(content: string, spans: WorkspaceImport[], replacement: (imp: WorkspaceImport) => string): string {
  let out = content;
  for (const imp of [...spans].sort((a, b) => b.start - a.start)) out = `${out.slice(0, imp.start)}${replacement(imp)}${out.slice(imp.end)}`;
  return out;
}

