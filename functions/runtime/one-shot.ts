import { join } from 'node:path';
import type { JobError, RunHooks, RunOutcome, RunRequest } from '../ports.js';
import type { Jail, JailSource } from './confinement.js';
import { JobGuard, OutputTail } from './job-guard.js';
import {
  makeJobDir,
  randomName,
  removeDir,
  spawnSandboxed,
  type ExitInfo,
  type SandboxProcess,
  type SandboxSpawn,
} from './sandbox-process.js';
import { withSharedFolder, writeSharedFolder } from './shared-folder.js';

/** How a runner registers a live job process with its owner (for shutdown); returns the untrack. */
export type TrackProcess = (proc: SandboxProcess) => () => void;

/**
 * The life of a one-shot job (Bash, a Go binary without the serve loop) around its process: a
 * fresh jail and job directory, the shared folder written in and, after `run`, collected back;
 * then the jail released and the directory removed, whatever happened. The outcome does not wait
 * for that: bwrap's PID-namespace init, a zombie once bwrap has exited, keeps the jail's cgroup
 * populated until the machine's PID 1 reaps it (over half a second on a container whose init reaps
 * late); the runner's `JailSource.close` waits for releases still in flight.
 */
export async function inOneShotJobDir(
  req: RunRequest,
  jails: JailSource,
  prefix: string,
  run: (jobDir: string, jail: Jail) => Promise<RunOutcome>,
): Promise<RunOutcome> {
  const jail = await jails.open(req.limits);
  const jobDir = join(jail.workDir, randomName(prefix));
  try {
    await makeJobDir(jobDir, jail.uid);
    if (req.shared) await writeSharedFolder(jobDir, jail, req.shared);
    const outcome = await run(jobDir, jail);
    return req.shared ? await withSharedFolder(outcome, jobDir, jail) : outcome;
  } finally {
    void jail
      .release()
      .then(() => removeDir(jobDir))
      .catch(() => undefined);
  }
}

/**
 * Starts a one-shot job's process under a fresh guard (timeout, cancel, output cap), hands it
 * `input` on stdin, and keeps it tracked while `supervise` watches it to its outcome.
 */
export async function superviseOneShot(
  req: RunRequest,
  signal: AbortSignal,
  jail: Jail,
  track: TrackProcess,
  spawn: SandboxSpawn,
  input: string,
  supervise: (proc: SandboxProcess, guard: JobGuard) => Promise<RunOutcome>,
): Promise<RunOutcome> {
  return superviseBegun(req, signal, jail, track, () => {
    const proc = spawnSandboxed(spawn);
    proc.child.stdin?.on('error', () => undefined); // a program that exits at once closes it early
    proc.child.stdin?.end(input);
    return proc;
  }, supervise);
}

/**
 * The same for a process `begin` starts or wakes (a Bash spare handed its job): the guard's clock
 * runs from the moment the job is handed over, not from when the process was spawned.
 */
export async function superviseBegun(
  req: RunRequest,
  signal: AbortSignal,
  jail: Jail,
  track: TrackProcess,
  begin: () => SandboxProcess,
  supervise: (proc: SandboxProcess, guard: JobGuard) => Promise<RunOutcome>,
): Promise<RunOutcome> {
  const guard = new JobGuard(req, signal, () => jail.runningLimitError());
  try {
    const proc = begin();
    const untrack = track(proc);
    try {
      return await supervise(proc, guard);
    } finally {
      untrack();
    }
  } finally {
    guard.dispose();
  }
}

/** The job's log: each piece goes to the hooks, counts against the output cap, and is kept for errors. */
export function oneShotLog(hooks: RunHooks, guard: JobGuard): { tail: OutputTail; write: (text: string) => void } {
  const tail = new OutputTail();
  const write = (text: string) => {
    tail.push(text);
    hooks.onLog(text);
    guard.countOutput(text);
  };
  return { tail, write };
}

/** The error for a process that ended without a result, with the last lines of its log. */
export function endedWithoutResult(who: string, info: ExitInfo, tail: OutputTail, before = ''): JobError {
  const how = info.signal ? `was killed by ${info.signal}` : `exited with code ${info.code}`;
  const output = tail.lastLines();
  return { name: 'ExecutionErr', message: `${who} ${how}${before}${output ? `:\n${output}` : ''}` };
}

/**
 * How a one-shot job process (Bash, Deno, Go) ended, once it is gone with everything it started: a
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
