import { describe, expect, it } from 'vitest';
import { inferScriptSchema, jobFiles, workspaceImports, WorkspaceImportError } from '../../../functions/core/dependencies/workspace-imports.js';
import { joinLock, splitLock } from '../../../functions/core/dependencies/lock-header.js';

/** Workspace imports as read from the source, the job's file layout, and the lock's header (docs/workspace-imports.md). */
describe('workspace imports read from the source', () => {
  const paths = (language: Parameters<typeof workspaceImports>[0], content: string, at = 'f/ops/report') => workspaceImports(language, at, content).map((i) => i.path);

  it('Python: absolute, relative and plain imports; packages and the standard library left out', () => {
    const content = [
      'import os, f.common.db as db',
      'from f.common.text import shout',
      'from u.alice.tools import x  # comment',
      'from .sibling import y',
      'from ..other.deep import z',
      'import requests',
      'from svc import client',
    ].join('\n');
    expect(paths('python3', content)).toEqual(['f/common/db', 'f/common/text', 'u/alice/tools', 'f/ops/sibling', 'f/other/deep']);
  });

  it('TypeScript: rooted and relative specifiers, with or without .ts; bare packages left out', () => {
    const content = [
      'import { a } from "/f/common/text.ts";',
      'import b from "./sibling";',
      'export { c } from "../other/deep.ts";',
      'import type { T } from "./types_only.ts";',
      'const d = await import("/u/alice/tools.ts");',
      'import lodash from "lodash-es";',
    ].join('\n');
    expect(paths('bun', content)).toEqual(['f/common/text', 'f/ops/sibling', 'f/other/deep', 'u/alice/tools']);
  });

  it('refuses what climbs out of the workspace or names no script, and deno scripts importing one', () => {
    expect(() => paths('bun', 'import x from "../../../etc/passwd.ts";')).toThrow(WorkspaceImportError);
    expect(() => paths('bun', 'import x from "/f/only_folder.ts";')).toThrow(/does not name a script/);
    expect(() => paths('python3', 'from ....up import x')).toThrow(WorkspaceImportError);
    expect(() => paths('python3', 'from . import sibling')).toThrow(/import a script by name/);
    expect(() => paths('deno', 'import x from "./helper.ts";')).toThrow(/deno scripts cannot import workspace scripts/);
    expect(paths('deno', 'import x from "npm:lodash-es@4";')).toEqual([]);
    expect(paths('bash', 'source ./x.sh')).toEqual([]);
  });
});

describe('the job layout', () => {
  it('TypeScript: specifiers point at the transpiled files, relative to each file', () => {
    const imported = new Map([
      ['f/common/text', { content: 'import { bang } from "../punct/marks.ts";\nexport const shout = (s: string) => s + bang;\n' }],
      ['f/punct/marks', { content: 'export const bang = "!";\n' }],
    ]);
    const files = jobFiles('bun', 'u/alice/report', 'import { shout } from "../../f/common/text.ts";\nexport function main() { return shout("a"); }\n', imported);
    expect(files.content).toContain('from "./f/common/text.mjs"');
    expect(Object.keys(files.modules).sort()).toEqual(['f/common/text.mjs', 'f/punct/marks.mjs']);
    expect(files.modules['f/common/text.mjs']).toContain('from "../punct/marks.mjs"');
  });

  it('Python: relative imports become absolute, the rest stays as written', () => {
    const imported = new Map([
      ['f/ops/text', { content: 'from .marks import bang\n' }],
      ['f/ops/marks', { content: 'bang = "!"\n' }],
    ]);
    const files = jobFiles('python3', 'f/ops/report', 'from .text import shout\nimport f.ops.marks as m\n', imported);
    expect(files.content).toBe('from f.ops.text import shout\nimport f.ops.marks as m\n');
    expect(files.modules).toEqual({ 'f/ops/text.py': 'from f.ops.marks import bang\n', 'f/ops/marks.py': 'bang = "!"\n' });
  });

  it('leaves a script without imports as it is', () => {
    expect(jobFiles('bun', 'f/a/b', 'import x from "/f/a/c.ts";', new Map())).toEqual({ content: 'import x from "/f/a/c.ts";', modules: {} });
  });
});

describe('the lock header', () => {
  it('records each import with its hash before the package lock, and splits them back', () => {
    const lock = joinLock([{ path: 'f/a/b', hash: '0123456789abcdef' }], 'PyYAML==5.0.0 --hash=sha256:' + 'a'.repeat(64));
    expect(lock).toBe(`# workspace-import f/a/b 0123456789abcdef\nPyYAML==5.0.0 --hash=sha256:${'a'.repeat(64)}`);
    expect(splitLock(lock)).toEqual({ imports: [{ path: 'f/a/b', hash: '0123456789abcdef' }], packages: `PyYAML==5.0.0 --hash=sha256:${'a'.repeat(64)}` });
    expect(splitLock(joinLock([{ path: 'f/a/b', hash: 'h' }], undefined))).toEqual({ imports: [{ path: 'f/a/b', hash: 'h' }], packages: undefined });
    // A lock without the header (a package lock, or another tool's) is all packages.
    expect(splitLock('# py311\nrequests==2')).toEqual({ imports: [], packages: '# py311\nrequests==2' });
    expect(joinLock([], '{"lockfileVersion":3}')).toBe('{"lockfileVersion":3}');
  });
});

describe('scripts of shared code', () => {
  it('keep a script without main that shares something; refuse one that shares nothing', () => {
    for (const [language, content] of [
      ['python3', 'def shout(s):\n    return s\n'],
      ['python3', 'class Db:\n    pass\n'],
      ['python3', 'VALUE: int = 1\n'],
      ['bun', 'export const shout = (s: string) => s;\n'],
      ['nativets', 'export function shout(s: string) { return s; }\n'],
    ] as const) {
      expect(inferScriptSchema(language, content).properties, content).toEqual({});
    }
    for (const [language, content] of [
      ['python3', 'print(1)'],
      ['python3', 'x == 1\n'],
      ['bun', 'console.log(1);\n'],
      ['deno', 'export const x = 1;\n'],
    ] as const) {
      expect(() => inferScriptSchema(language, content), content).toThrow(/no main function found/);
    }
  });
});
