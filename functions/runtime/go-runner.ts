import { existsSync } from 'node:fs';
import { chmod, copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { JobError, RunHooks, RunOutcome, RunRequest } from '../ports.js';
import type { Confiner, Jail } from './confinement.js';
import { goBinaryPath } from './go-build.js';
import { JobGuard, OutputTail } from './job-guard.js';
import { settleOneShot } from './one-shot.js';
import { pythonCall } from './python-runner.js';
import { makeJobDir, randomName, removeDir, sandboxEnv, spawnSandboxed, type SandboxProcess } from './sandbox-process.js';
import { withSharedFolder, writeSharedFolder } from './shared-folder.js';

/** Why a Go job cannot run: its binary is built when the version is created, never here. */
export const GO_BINARY_MISSING =
  'the build of this Go script version is not on this runner (Go scripts are built when a version is created, never when one runs): create the version again';

/** A runner with no Go builds at all: the AWS sandbox Lambda, for now (README: Go scripts). */
export const GO_NOT_ON_THIS_RUNNER = 'Go scripts do not run on this runner: it has no Go builds (on AWS Go scripts are not supported yet; README: Go scripts)';

type Reply = { ok: true; result: unknown } | { ok: false; error: JobError };

/**
 * Runs a Go script's binary, built at create (go-build.ts), in a fresh confined process per job:
 * a copy of it in the job's directory, the arguments as JSON on stdin, the result as one JSON
 * line on fd 3, stdout and stderr as the log.
 */
export async function runGo(
  req: RunRequest,
  hooks: RunHooks,
  signal: AbortSignal,
  workRoot: string,
  track: (proc: SandboxProcess) => () => void,
  confiner: Confiner,
  cacheDir: string | undefined,
): Promise<RunOutcome> {
  if (cacheDir === undefined) return { ok: false, error: { name: 'ExecutionErr', message: GO_NOT_ON_THIS_RUNNER } };
  const built = goBinaryPath(cacheDir, req.content);
  if (!existsSync(built)) return { ok: false, error: { name: 'ExecutionErr', message: GO_BINARY_MISSING } };
  const jail = confiner.open(req.limits);
  const jobDir = join(workRoot, randomName('go'));
  try {
    await makeJobDir(jobDir, jail.uid);
    if (req.shared) await writeSharedFolder(jobDir, jail, req.shared);
    const binary = join(jobDir, 'main');
    await copyFile(built, binary);
    await chmod(binary, 0o755);
    const outcome = await runIn(binary, jobDir, jail, req, hooks, signal, track);
    return req.shared ? await withSharedFolder(outcome, jobDir, jail) : outcome;
  } finally {
    await jail.release();
    await removeDir(jobDir);
  }
}

async function runIn(
  binary: string,
  jobDir: string,
  jail: Jail,
  req: RunRequest,
  hooks: RunHooks,
  signal: AbortSignal,
  track: (proc: SandboxProcess) => () => void,
): Promise<RunOutcome> {
  const guard = new JobGuard(req, signal, () => jail.limitError());
  try {
    const proc = spawnSandboxed({
      jail,
      visibleDirs: [jobDir],
      command: binary,
      args: [],
      cwd: jobDir,
      env: sandboxEnv(req.env, jobDir),
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    });
    proc.child.stdin?.on('error', () => undefined); // a program that exits at once closes it early
    // Only the names the schema declares, as for Python: undeclared arguments never reach main.
    proc.child.stdin?.end(JSON.stringify(pythonCall(req).kwargs));
    const untrack = track(proc);
    try {
      return await supervise(proc, jail, hooks, guard);
    } finally {
      untrack();
    }
  } finally {
    guard.dispose();
  }
}

async function supervise(proc: SandboxProcess, jail: Jail, hooks: RunHooks, guard: JobGuard): Promise<RunOutcome> {
  const tail = new OutputTail();
  const log = (text: string) => {
    tail.push(text);
    hooks.onLog(text);
    guard.countOutput(text);
  };
  proc.child.stdout?.setEncoding('utf8').on('data', log);
  proc.child.stderr?.setEncoding('utf8').on('data', log);
  let reply: Reply | undefined;
  const results = proc.child.stdio[3] as Readable;
  results.on('error', () => undefined);
  createInterface({ input: results, crlfDelay: Infinity }).on('line', (line) => {
    if (reply !== undefined) return;
    guard.countOutput(line);
    try {
      reply = JSON.parse(line) as Reply;
    } catch {
      reply = { ok: false, error: { name: 'ExecutionErr', message: 'the Go program wrote something that is not its result on fd 3' } };
    }
  });

  const settled = await settleOneShot(proc, jail, guard, 'the Go program');
  if (!settled.ok) return settled;
  const finished = reply as Reply | undefined;
  if (!finished) {
    const { code, signal } = settled.info;
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    const output = tail.lastLines();
    return { ok: false, error: { name: 'ExecutionErr', message: `the Go program ${how} before main returned${output ? `:\n${output}` : ''}` } };
  }
  if (guard.reason) return { ok: false, error: guard.reason };
  return finished.ok ? { ok: true, result: finished.result ?? null, streamed: false } : { ok: false, error: finished.error };
}
