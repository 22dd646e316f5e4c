import { existsSync } from 'node:fs';
import { chmod, copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { JobError, RunHooks, RunOutcome, RunRequest } from '../ports.js';
import type { Jail, JailSource } from './confinement.js';
import { goBinaryPath } from './go-build.js';
import type { JobGuard } from './job-guard.js';
import { endedWithoutResult, inOneShotJobDir, oneShotLog, settleOneShot, superviseOneShot, type TrackProcess } from './one-shot.js';
import { pythonCall } from './python-runner.js';
import { sandboxEnv, type SandboxProcess, type SandboxSpawn } from './sandbox-process.js';
import { LineReader } from './shim-channel.js';

/** Why a Go job cannot run: its binary is built when the version is created, never here. */
export const GO_BINARY_MISSING =
  'the build of this Go script version is not on this runner (Go scripts are built when a version is created, never when one runs): create the version again';

/** A runner with no Go builds at all: the AWS sandbox Lambda, for now (README: Go scripts). */
export const GO_NOT_ON_THIS_RUNNER = 'Go scripts do not run on this runner: it has no Go builds (on AWS Go scripts are not supported yet; README: Go scripts)';

type Reply = { ok: true; result: unknown } | { ok: false; error: JobError };

/** The binary of the job's version, built at create (go-build.ts), or why the job cannot run. */
export function goBinary(req: RunRequest, cacheDir: string | undefined): { ok: true; binary: string } | { ok: false; error: JobError } {
  if (cacheDir === undefined) return { ok: false, error: { name: 'ExecutionErr', message: GO_NOT_ON_THIS_RUNNER } };
  const binary = goBinaryPath(cacheDir, req.content);
  if (!existsSync(binary)) return { ok: false, error: { name: 'ExecutionErr', message: GO_BINARY_MISSING } };
  return { ok: true, binary };
}

/**
 * Runs a Go script's binary in a fresh confined process for one job, for a binary built before
 * the serve loop (go-warm.ts runs the others): a copy of it in the job's directory, the arguments
 * as JSON on stdin, the result as one JSON line on fd 3, stdout and stderr as the log.
 */
export async function runGo(req: RunRequest, hooks: RunHooks, signal: AbortSignal, track: TrackProcess, jails: JailSource, built: string): Promise<RunOutcome> {
  return inOneShotJobDir(req, jails, 'go', async (jobDir, jail) => {
    const binary = join(jobDir, 'main');
    await copyFile(built, binary);
    await chmod(binary, 0o755);
    const spawn = {
      jail,
      visibleDirs: [jobDir],
      command: binary,
      args: [],
      cwd: jobDir,
      env: sandboxEnv(req.env, jobDir, jail),
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    } satisfies SandboxSpawn;
    // Only the names the schema declares, as for Python: undeclared arguments never reach main.
    const input = JSON.stringify(pythonCall(req).kwargs);
    return superviseOneShot(req, signal, jail, track, spawn, input, (proc, guard) => supervise(proc, jail, hooks, guard, req.maxOutputBytes));
  });
}

async function supervise(proc: SandboxProcess, jail: Jail, hooks: RunHooks, guard: JobGuard, maxOutputBytes: number): Promise<RunOutcome> {
  const log = oneShotLog(hooks, guard);
  proc.child.stdout?.setEncoding('utf8').on('data', log.write);
  proc.child.stderr?.setEncoding('utf8').on('data', log.write);
  let reply: Reply | undefined;
  const results = proc.child.stdio[3] as Readable;
  results.on('error', () => undefined);
  // Bounded lines, as the warm processes' channel (shim-channel.ts): a result line that never ends
  // fails the job at the output limit instead of growing in the service's memory until it ran out.
  const lines = new LineReader(
    (line) => {
      if (reply !== undefined) return;
      guard.countOutput(line);
      try {
        reply = JSON.parse(line) as Reply;
      } catch {
        reply = { ok: false, error: { name: 'ExecutionErr', message: 'the Go program wrote something that is not its result on fd 3' } };
      }
    },
    () => guard.outputExceeded(),
  );
  lines.maxLineBytes = maxOutputBytes;
  results.on('data', (chunk: Buffer) => lines.push(chunk));

  const settled = await settleOneShot(proc, jail, guard, 'the Go program');
  if (!settled.ok) return settled;
  const finished = reply as Reply | undefined;
  if (!finished) return { ok: false, error: endedWithoutResult('the Go program', settled.info, log.tail, ' before main returned') };
  if (guard.reason) return { ok: false, error: guard.reason };
  return finished.ok ? { ok: true, result: finished.result ?? null, streamed: false } : { ok: false, error: finished.error };
}
