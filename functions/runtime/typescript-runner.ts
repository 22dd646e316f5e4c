import { symlink, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ts } from '../core/common/typescript-compiler.js';
import type { JobResourceLimits, RunRequest } from '../ports.js';
import type { Jail, JailSource } from './confinement.js';
import { installTypeScriptClient } from './client-libraries.js';
import { withoutVersionPins } from '../core/dependencies/npm-imports.js';
import {
  copyCodeFile,
  makeCodeDir,
  randomName,
  removeDir,
  resolveExecutable,
  sandboxEnv,
  spawnSandboxed,
} from './sandbox-process.js';
import { ScriptStartError } from './script-start-error.js';
import { pipeChannel } from './shim-channel.js';
import { WarmWorker } from './warm-worker.js';

const NODE_SHIM = fileURLToPath(new URL('./shims/node-shim.mjs', import.meta.url));

/** Positional arguments in schema order; names not given stay out so JS defaults apply. */
export function typeScriptCall(req: RunRequest): Record<string, unknown> {
  const params = Object.keys(req.schema.properties);
  const values = Object.fromEntries(params.filter((name) => Object.hasOwn(req.args, name)).map((name) => [name, req.args[name]]));
  // Parameters typed `Date` (inferred as date-time strings): the shim makes them Dates (docs/windmill.md).
  const dates = params.filter((name) => req.schema.properties[name]?.format === 'date-time');
  return dates.length > 0 ? { params, values, dates } : { params, values };
}

/** The JavaScript a spare gets through `WarmWorker.loadCode`; a syntax error fails the job. */
export function typeScriptCode(req: RunRequest): Promise<string> {
  // `"lodash-es@4.17.21"` imports the installed lodash-es: the pin is the lock's business.
  return transpile(req.lock ? withoutVersionPins(req.content) : req.content);
}

/** The workspace scripts it imports, transpiled as the script is (RunRequest.modules). */
export async function typeScriptModules(req: RunRequest): Promise<Record<string, string> | undefined> {
  if (!req.modules) return undefined;
  const out: Record<string, string> = {};
  for (const [file, source] of Object.entries(req.modules)) out[file] = await transpile(req.lock ? withoutVersionPins(source) : source, file);
  return out;
}

/**
 * Starts a spare Node child: runtime and shim up, no script yet. `WarmWorker.loadCode` writes the
 * transpiled script, which the shim imports on the first job. `depsTree`: an installed dependency
 * tree (README: Dependencies) the script imports from, read-only.
 */
export async function startTypeScriptSpare(limits: JobResourceLimits | undefined, jails: JailSource, depsTree?: string): Promise<WarmWorker> {
  const jail: Jail = await jails.open(limits, 'warm');
  const procDir = join(jail.workDir, randomName('ts'));
  try {
    await makeCodeDir(procDir);
    const scriptPath = join(procDir, 'main.mjs');
    const shimPath = join(procDir, 'node-shim.mjs');
    await copyCodeFile(NODE_SHIM, shimPath);
    await installTypeScriptClient(procDir);
    if (depsTree) await linkDependencies(depsTree, join(procDir, 'node_modules'));
    const nodeArgs = [
      // Defence in depth beside the uid switch: fs access limited to this process's own dir.
      '--experimental-permission',
      `--allow-fs-read=${procDir}`,
      ...(depsTree ? [`--allow-fs-read=${depsTree}`] : []),
      `--allow-fs-write=${procDir}`,
      '--allow-child-process',
      '--disable-warning=ExperimentalWarning',
      '--disable-warning=SecurityWarning',
      '--enable-source-maps',
      // A warm process waits between jobs, and V8's memory reducer takes each short wait for the
      // end of the process's work: it starts full collections that cost a warm process more CPU
      // than its jobs (a 40-step flow's steps, a process each, ~0.6 ms each against ~0.35 ms
      // without). The pool's memory budget (warm-pool.ts) bounds what idle processes hold instead.
      '--no-memory-reducer',
      shimPath,
      scriptPath,
    ];
    // Through sh only to point fd 2 at the stdout pipe (Node cannot dup2), so the log keeps the
    // order in which stdout and stderr lines were written; `exec` keeps the pid and group.
    const proc = spawnSandboxed({
      jail,
      visibleDirs: [procDir],
      readOnlyDirs: depsTree ? [depsTree] : [],
      command: resolveExecutable('sh'),
      args: ['-c', 'exec "$@" 2>&1', 'sh', process.execPath, ...nodeArgs],
      cwd: procDir,
      env: sandboxEnv({}, procDir, jail),
      stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'],
    });
    return new WarmWorker(proc, pipeChannel(proc.child), procDir, jail, scriptPath);
  } catch (error) {
    await removeDir(procDir);
    await jail.release();
    throw error;
  }
}

/**
 * Makes the tree's top-level packages importable from `main.mjs`: a link per package (or scope)
 * beside `svc-client`, which stays the built-in one. Node follows each link to the tree, where the
 * packages' own imports resolve as npm laid them out.
 */
async function linkDependencies(tree: string, modules: string): Promise<void> {
  for (const entry of await readdir(join(tree, 'node_modules'))) {
    if (entry.startsWith('.') || entry === 'svc-client') continue;
    await symlink(join(tree, 'node_modules', entry), join(modules, entry));
  }
}

/**
 * Types are stripped, never checked, as Windmill's runtimes do. TypeScript's own transpiler is
 * plain JavaScript, so the same code runs on this machine and inside a bundled Lambda (esbuild's
 * API needs a native binary for the platform, which a bundle cannot carry).
 */
async function transpile(content: string, fileName = 'main.ts'): Promise<string> {
  const output = ts.transpileModule(content, {
    fileName: fileName.replace(/\.mjs$/, '.ts'),
    reportDiagnostics: true,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      inlineSourceMap: true,
      inlineSources: true,
      verbatimModuleSyntax: false,
    },
  });
  const errors = (output.diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (errors.length > 0) {
    const details = errors.map((d) => {
      const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
      const at = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : null;
      const where = fileName === 'main.ts' ? '' : `${fileName.replace(/\.mjs$/, '')}, `;
      return at ? `${text} (${where}line ${at.line + 1}, column ${at.character})` : text;
    });
    throw new ScriptStartError({ name: 'SyntaxError', message: details.join('\n') });
  }
  return output.outputText;
}
