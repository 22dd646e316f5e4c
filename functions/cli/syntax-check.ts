import { execFileSync } from 'node:child_process';
import { parser as pythonParser } from '@lezer/python';
import { ts } from '../core/common/typescript-compiler.js';
import type { ScriptLanguage } from './layout.js';
import { goSyntaxError } from '../core/schema/go.js';

/**
 * `lint: true` parses every script in its language before a push: TypeScript with the TypeScript
 * parser, Python with the Lezer Python grammar the schema inference uses, Bash with `bash -n`. A
 * problem names `file:line:column` (1-based), as editors and compilers do.
 */

export interface SyntaxProblem {
  line: number;
  column: number;
  message: string;
}

export function syntaxProblem(language: ScriptLanguage, file: string, content: string): SyntaxProblem | null {
  switch (language) {
    case 'bun':
    case 'deno':
    case 'nativets':
      return typeScriptProblem(file, content);
    case 'python3':
      return pythonProblem(content);
    case 'bash':
      return bashProblem(content);
    case 'go': {
      // Syntax only, as for the others: the server's build reports type errors at push.
      const at = goSyntaxError(content);
      return at && { ...at, message: 'syntax error' };
    }
  }
}

function typeScriptProblem(file: string, content: string): SyntaxProblem | null {
  // transpileModule reports syntax errors only: types are the runtime's business, not lint's.
  const { diagnostics } = ts.transpileModule(content, { fileName: file, reportDiagnostics: true, compilerOptions: { target: ts.ScriptTarget.Latest, module: ts.ModuleKind.ESNext } });
  const first = diagnostics?.find((d) => d.category === ts.DiagnosticCategory.Error);
  if (!first) return null;
  const source = ts.createSourceFile(file, content, ts.ScriptTarget.Latest);
  const { line, character } = source.getLineAndCharacterOfPosition(first.start ?? 0);
  return { line: line + 1, column: character + 1, message: ts.flattenDiagnosticMessageText(first.messageText, ' ') };
}

function positionOf(content: string, offset: number): { line: number; column: number } {
  const before = content.slice(0, offset).split('\n');
  return { line: before.length, column: before[before.length - 1].length + 1 };
}

function pythonProblem(content: string): SyntaxProblem | null {
  let found: number | null = null;
  pythonParser.parse(content).iterate({
    enter(node) {
      if (found !== null) return false;
      if (node.type.isError) {
        found = node.from;
        return false;
      }
      return undefined;
    },
  });
  if (found === null) return null;
  const at = positionOf(content, found);
  const line = content.split('\n')[at.line - 1] ?? '';
  return { ...at, message: `invalid syntax near ${JSON.stringify(line.slice(at.column - 1, at.column + 19) || 'the end of the file')}` };
}

function bashProblem(content: string): SyntaxProblem | null {
  try {
    // -n reads the script without running any of it.
    execFileSync('bash', ['-n'], { input: content, stdio: ['pipe', 'ignore', 'pipe'], encoding: 'utf8' });
    return null;
  } catch (e) {
    const stderr = String((e as { stderr?: string }).stderr ?? '');
    const first = stderr.split('\n').find((l) => /line \d+:/.test(l)) ?? stderr.split('\n')[0];
    const m = /line (\d+): (.*)$/.exec(first ?? '');
    if (!m) return { line: 1, column: 1, message: first || 'bash -n refused the script' };
    const line = Number(m[1]);
    // bash names the token, not its column: find the token on that line.
    const token = /unexpected token `([^']*)'/.exec(m[2])?.[1];
    const column = token ? Math.max(0, (content.split('\n')[line - 1] ?? '').indexOf(token)) + 1 : 1;
    return { line, column, message: m[2] };
  }
}
