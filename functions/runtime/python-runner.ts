import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JobResourceLimits, RunRequest } from '../ports.js';
import type { Jail, JailSource } from './confinement.js';
import { installPythonClient } from './client-libraries.js';
import {
  copyCodeFile,
  makeCodeDir,
  randomName,
  removeDir,
  resolveExecutable,
  sandboxEnv,
  spawnSandboxed,
} from './sandbox-process.js';
import { pipeChannel } from './shim-channel.js';
import { WarmWorker } from './warm-worker.js';

const PYTHON_SHIM = fileURLToPath(new URL('./shims/python_shim.py', import.meta.url));

/** Keyword arguments: only the names the schema declares, so undeclared args never reach main. */
export function pythonCall(req: RunRequest): Record<string, unknown> {
  const params = Object.keys(req.schema.properties).filter((name) => Object.hasOwn(req.args, name));
  const kwargs = Object.fromEntries(params.map((name) => [name, req.args[name]]));
  // The arguments the schema does not name, for a `main(**kwargs)` (the shim passes them only then).
  const rest = Object.keys(req.args).filter((name) => !Object.hasOwn(req.schema.properties, name));
  return rest.length > 0 ? { kwargs, rest: Object.fromEntries(rest.map((name) => [name, req.args[name]])) } : { kwargs };
}

/**
 * Starts a spare Python child: interpreter and shim up, no script yet. `WarmWorker.loadCode`
 * writes the script, which the shim imports on the first job. `depsTree`: an installed tree
 * (README: Dependencies) whose `site` folder goes on sys.path, read-only.
 */
export async function startPythonSpare(limits: JobResourceLimits | undefined, jails: JailSource, depsTree?: string): Promise<WarmWorker> {
  const jail: Jail = await jails.open(limits, 'warm');
  const procDir = join(jail.workDir, randomName('py'));
  try {
    await makeCodeDir(procDir);
    const scriptPath = join(procDir, 'main.py');
    const shimPath = join(procDir, 'python_shim.py');
    await copyCodeFile(PYTHON_SHIM, shimPath);
    await installPythonClient(procDir);
    const proc = spawnSandboxed({
      jail,
      visibleDirs: [procDir],
      readOnlyDirs: depsTree ? [depsTree] : [],
      command: resolveExecutable('python3'),
      // -u: prints reach the log as they happen; -B: the code dir is read-only, skip .pyc writes.
      args: ['-u', '-B', shimPath, scriptPath],
      cwd: procDir,
      // After the script's own dir, before the standard library: as `pip install --target` would.
      env: sandboxEnv(depsTree ? { PYTHONPATH: join(depsTree, 'site') } : {}, procDir, jail),
      stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'],
    });
    return new WarmWorker(proc, pipeChannel(proc.child), procDir, jail, scriptPath);
  } catch (error) {
    await removeDir(procDir);
    await jail.release();
    throw error;
  }
}
