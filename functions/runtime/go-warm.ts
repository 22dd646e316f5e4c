import { chmod, copyFile, open } from 'node:fs/promises';
import { join } from 'node:path';
import type { JobError, RunRequest } from '../ports.js';
import type { Jail, JailSource } from './confinement.js';
import { GO_SERVE_FLAG } from './go-source.js';
import { JobGuard, OutputTail } from './job-guard.js';
import { endedWithoutResult } from './one-shot.js';
import { pythonCall } from './python-runner.js';
import { pipeChannel } from './shim-channel.js';
import { makeCodeDir, randomName, removeDir, resolveExecutable, sandboxEnv, spawnSandboxed, type SandboxProcess } from './sandbox-process.js';
import { ScriptStartError } from './script-start-error.js';
import { WarmWorker, type ShimChannel } from './warm-worker.js';

/**
 * Warm Go processes: a Go script's binary (built by go-build.ts from go-source.ts's program),
 * started once with GO_SERVE_FLAG, serves the jobs of its version one at a time, as the Python
 * shim does: each job's arguments, environment and directory as a JSON line on its fd 3, the reply
 * on fd 4, stdout and stderr as the log. The pool keys it as every warm process (workspace, run-as
 * identity, limits, version), so a process never serves another trust domain or another binary.
 */

/** The job as the program's serve loop reads it: only the names the schema declares, by name. */
export function goCall(req: RunRequest): Record<string, unknown> {
  return { input: pythonCall(req).kwargs };
}

/** Binaries are named by their content's hash: what they speak is read once (until rebuilt, see go-build.ts). */
const serving = new Map<string, Promise<boolean>>();
const SERVING_REMEMBERED = 1000;

/**
 * Whether the binary has the serve loop. One built by an svc before it (kept in a build cache,
 * or uploaded by an older CLI) runs one process per job instead.
 */
export function servesWarm(binary: string): Promise<boolean> {
  let known = serving.get(binary);
  if (!known) {
    if (serving.size >= SERVING_REMEMBERED) serving.clear();
    known = containsBytes(binary, Buffer.from(GO_SERVE_FLAG));
    serving.set(binary, known);
    known.catch(() => serving.delete(binary));
  }
  return known;
}

/** For a binary just (re)built at that path. */
export function forgetServesWarm(binary: string): void {
  serving.delete(binary);
}

async function containsBytes(path: string, needle: Buffer): Promise<boolean> {
  const file = await open(path, 'r');
  try {
    const chunk = Buffer.alloc(1 << 20);
    let carry = Buffer.alloc(0);
    for (;;) {
      const { bytesRead } = await file.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) return false;
      const window = Buffer.concat([carry, chunk.subarray(0, bytesRead)]);
      if (window.includes(needle)) return true;
      carry = window.subarray(Math.max(0, window.length - needle.length + 1));
    }
  } finally {
    await file.close();
  }
}

/**
 * Starts a warm process of a Go binary in a jail of its own: a copy of the binary in the process's
 * directory (the build cache stays out of its view), run with the serve flag. Resolves once the
 * program said it is ready, after the script's package initialisation: a program that cannot start
 * fails here, with what it printed, before any job was given to it. That wait is bounded by the
 * job's timeout and cancel, since `init` functions are the script's code.
 */
export async function startGoProcess(binary: string, req: RunRequest, signal: AbortSignal, jails: JailSource): Promise<WarmWorker> {
  const jail: Jail = await jails.open(req.limits, 'warm');
  const procDir = join(jail.workDir, randomName('go'));
  let worker: WarmWorker | undefined;
  try {
    await makeCodeDir(procDir);
    const program = join(procDir, 'main');
    await copyFile(binary, program);
    await chmod(program, 0o755);
    // Through sh only to point fd 2 at the stdout pipe, so the log keeps the order of the lines.
    const proc = spawnSandboxed({
      jail,
      visibleDirs: [procDir],
      command: resolveExecutable('sh'),
      args: ['-c', 'exec "$@" 2>&1', 'sh', program, GO_SERVE_FLAG],
      cwd: procDir,
      env: sandboxEnv({}, procDir, jail),
      stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'],
    });
    const channel = pipeChannel(proc.child);
    const started = startup(proc, channel);
    worker = new WarmWorker(proc, channel, procDir, jail, program, true);
    const failure = await started(new JobGuard(req, signal, () => jail.runningLimitError()));
    if (failure) throw new ScriptStartError(failure);
    return worker;
  } catch (error) {
    if (worker) await worker.dispose();
    else {
      await removeDir(procDir);
      await jail.release();
    }
    throw error;
  }
}

/** Waits, from the spawn on, for the program's ready message; undefined once it came, else why not. */
function startup(proc: SandboxProcess, channel: ShimChannel): (guard: JobGuard) => Promise<JobError | undefined> {
  const tail = new OutputTail();
  const collect = (chunk: Buffer) => tail.push(chunk.toString('utf8'));
  proc.child.stdout?.on('data', collect);
  proc.child.stderr?.on('data', collect);
  const ready = new Promise<void>((resolveReady) => channel.onMessage((message) => (message as { type?: string }).type === 'ready' && resolveReady()));
  return async (guard) => {
    try {
      const first = await Promise.race([
        ready.then(() => ({ kind: 'ready' as const })),
        proc.exited.then((info) => ({ kind: 'exited' as const, info })),
        guard.stopped.then((error) => ({ kind: 'stopped' as const, error })),
      ]);
      if (first.kind === 'ready') return undefined;
      if (first.kind === 'stopped') return first.error;
      await proc.closed;
      return endedWithoutResult('the Go program', first.info, tail, ' before it was ready for its job');
    } finally {
      guard.dispose();
      proc.child.stdout?.off('data', collect);
      proc.child.stderr?.off('data', collect);
    }
  };
}
