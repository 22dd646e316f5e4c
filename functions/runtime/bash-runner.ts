import type { RunHooks, RunOutcome, RunRequest } from '../ports.js';
import { BashInputError, bashSpareEnv, bashSpareJob, type BashSpare } from './bash-spare.js';
import type { Jail } from './confinement.js';
import type { JobGuard } from './job-guard.js';
import { endedWithoutResult, oneShotLog, settleOneShot, superviseBegun, type TrackProcess } from './one-shot.js';
import { removeDir, writeCodeFile, type SandboxProcess } from './sandbox-process.js';
import { withSharedFolder, writeSharedFolder } from './shared-folder.js';

/** Positional arguments in schema order: strings raw, everything else JSON, missing ones empty. */
export function bashArguments(req: RunRequest): string[] {
  return Object.keys(req.schema.properties).map((name) => {
    const value = Object.hasOwn(req.args, name) ? req.args[name] : undefined;
    if (value === undefined || value === null) return '';
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
}

/**
 * Runs a bash script in a process of its own, one per job, started ahead of the job when a spare
 * was ready (bash-spare.ts): `takeSpare` gives a spare nobody used, or one started now. stdout is
 * both the log and the result: its last non-empty line, parsed as JSON when it is JSON.
 */
export async function runBash(
  req: RunRequest,
  hooks: RunHooks,
  signal: AbortSignal,
  track: TrackProcess,
  takeSpare: (jobEnded: Promise<void>) => Promise<BashSpare>,
): Promise<RunOutcome> {
  // The spare's replacement starts once this job has ended, not while it is handed its job.
  let endJob = () => {};
  const spare = await takeSpare(new Promise<void>((resolve) => (endJob = resolve)));
  const { jail, jobDir } = spare;
  try {
    let job: string;
    try {
      job = bashSpareJob(bashSpareEnv(spare, req.env), bashArguments(req));
    } catch (error) {
      if (error instanceof BashInputError) return { ok: false, error: { name: error.name, message: error.message } };
      throw error;
    }
    await writeCodeFile(spare.scriptPath, req.content);
    if (req.shared) await writeSharedFolder(jobDir, jail, req.shared);
    const begin = () => {
      spare.begin(job);
      return spare.proc;
    };
    const outcome = await superviseBegun(req, signal, jail, track, begin, (proc, guard) => supervise(proc, jail, hooks, guard));
    return req.shared ? await withSharedFolder(outcome, jobDir, jail) : outcome;
  } finally {
    endJob();
    // As for every one-shot job (one-shot.ts): answered before its jail is back.
    spare.proc.kill();
    void jail
      .release()
      .then(() => removeDir(jobDir))
      .catch(() => undefined);
  }
}

async function supervise(proc: SandboxProcess, jail: Jail, hooks: RunHooks, guard: JobGuard): Promise<RunOutcome> {
  const stdout: string[] = [];
  const log = oneShotLog(hooks, guard);
  proc.child.stdout?.setEncoding('utf8').on('data', (text: string) => {
    stdout.push(text);
    log.write(text);
  });
  proc.child.stderr?.setEncoding('utf8').on('data', log.write);

  const settled = await settleOneShot(proc, jail, guard, 'bash');
  if (!settled.ok) return settled;
  if (settled.info.code !== 0) return { ok: false, error: endedWithoutResult('bash', settled.info, log.tail) };
  return { ok: true, result: lastLineResult(stdout.join('')), streamed: false };
}

function lastLineResult(stdout: string): unknown {
  const line = stdout.split('\n').map((l) => l.trim()).filter(Boolean).at(-1);
  if (line === undefined) return null;
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return line;
  }
}
