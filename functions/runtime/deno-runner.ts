import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JobResourceLimits } from '../ports.js';
import { installDenoClient } from './client-libraries.js';
import type { Jail, JailSource } from './confinement.js';
import { DENO_MISSING, denoBinary } from './deno-binary.js';
import { copyCodeFile, makeCodeDir, makeJobDir, randomName, removeDir, resolveExecutable, sandboxEnv, spawnSandboxed, writeCodeFile } from './sandbox-process.js';
import { ScriptStartError } from './script-start-error.js';
import { pipeChannel } from './shim-channel.js';
import { WarmWorker } from './warm-worker.js';

const DENO_SHIM = fileURLToPath(new URL('./shims/deno-shim.mjs', import.meta.url));

/**
 * What a Deno job may do, as Windmill's Deno jobs: the network, its own environment (which is
 * only the job's, see sandboxEnv), reading and writing its process's directory (its code, its job
 * directories, its own DENO_DIR) and reading its installed packages. No subprocesses, FFI or sys.
 * With a tree, `npm:` imports resolve from its `node_modules` (Deno's manual node_modules mode),
 * so a run never downloads a package.
 */
function denoArgs(procDir: string, depsTree: string | undefined): string[] {
  return [
    'run',
    '--no-prompt',
    '--no-config',
    '--no-lock',
    '--allow-net',
    '--allow-env',
    `--allow-read=${[procDir, ...(depsTree ? [depsTree] : [])].join(',')}`,
    `--allow-write=${procDir}`,
    ...(depsTree ? ['--node-modules-dir=manual'] : []),
    `--import-map=${join(procDir, 'import_map.json')}`,
    join(procDir, 'deno-shim.mjs'),
    join(procDir, 'main.ts'),
  ];
}

/**
 * Starts a spare Deno process: runtime and shim up, no script yet. `WarmWorker.loadCode` writes
 * the script, which the shim imports on the first job; jobs then arrive as JSON lines on fd 3, as for
 * TypeScript on Node. `depsTree`: the installed tree of the version's lock (README: Dependencies),
 * read-only.
 */
export async function startDenoSpare(limits: JobResourceLimits | undefined, jails: JailSource, depsTree?: string): Promise<WarmWorker> {
  const deno = denoBinary();
  if (!deno) throw new ScriptStartError({ name: 'ExecutionErr', message: DENO_MISSING });
  const jail: Jail = await jails.open(limits, 'warm');
  const procDir = join(jail.workDir, randomName('deno'));
  try {
    await makeCodeDir(procDir);
    const scriptPath = join(procDir, 'main.ts');
    await copyCodeFile(DENO_SHIM, join(procDir, 'deno-shim.mjs'));
    const client = await installDenoClient(procDir);
    await writeCodeFile(join(procDir, 'import_map.json'), JSON.stringify({ imports: { 'svc-client': `file://${client}` } }));
    if (depsTree) await symlink(join(depsTree, 'node_modules'), join(procDir, 'node_modules'));
    // Deno's compiled-module cache (and, for a version without a lock, its downloads): this
    // process's own, never shared with another process.
    const denoDir = join(procDir, '.deno');
    await makeJobDir(denoDir, jail.uid);
    const env = { DENO_DIR: denoDir, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1', DENO_TLS_CA_STORE: 'system' };
    // Through sh only to point fd 2 at the stdout pipe, so the log keeps the order of the lines.
    const proc = spawnSandboxed({
      jail,
      visibleDirs: [procDir],
      readOnlyDirs: depsTree ? [depsTree] : [],
      command: resolveExecutable('sh'),
      args: ['-c', 'exec "$@" 2>&1', 'sh', deno, ...denoArgs(procDir, depsTree)],
      cwd: procDir,
      env: sandboxEnv(env, procDir, jail),
      stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'],
    });
    return new WarmWorker(proc, pipeChannel(proc.child), procDir, jail, scriptPath);
  } catch (error) {
    await removeDir(procDir);
    await jail.release();
    throw error;
  }
}
