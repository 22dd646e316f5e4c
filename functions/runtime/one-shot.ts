import type { JobError } from '../ports.js';
import type { Jail } from './confinement.js';
import type { JobGuard } from './job-guard.js';
import type { ExitInfo, SandboxProcess } from './sandbox-process.js';

/**
 * How a one-shot job process (Bash, Deno) ended, once it is gone with everything it started: a
 * failure the runner reports as it is (cancel, timeout, output cap, a limit hit, a start error), or
 * the exit for the runner to read its result from. `drained` runs once the output pipes are closed.
 */
export async function settleOneShot(
  proc: SandboxProcess,
  jail: Jail,
  guard: JobGuard,
  interpreter: string,
  drained: () => void = () => undefined,
): Promise<{ ok: false; error: JobError } | { ok: true; info: ExitInfo }> {
  const first = await Promise.race([
    proc.exited.then((info) => ({ kind: 'exited' as const, info })),
    guard.stopped.then((error) => ({ kind: 'stopped' as const, error })),
  ]);
  // Whatever the script started belongs to the job and ends with it.
  proc.kill();
  if (first.kind === 'stopped') {
    await proc.exited;
    return { ok: false, error: first.error };
  }
  await proc.closed;
  drained();
  if (guard.reason) return { ok: false, error: guard.reason };
  // A limit the job hit explains its failure better than the exit code it caused.
  const limit = jail.limitError(first.info);
  if (limit) return { ok: false, error: limit };
  if (first.info.error) return { ok: false, error: { name: 'ExecutionErr', message: `could not start ${interpreter}: ${first.info.error.message}` } };
  return { ok: true, info: first.info };
}
