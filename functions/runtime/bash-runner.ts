import { join } from 'node:path';
import type { RunHooks, RunOutcome, RunRequest } from '../ports.js';
import type { Confiner, Jail } from './confinement.js';
import { withSharedFolder, writeSharedFolder } from './shared-folder.js';
import { JobGuard, OutputTail } from './job-guard.js';
import { settleOneShot } from './one-shot.js';
import {
  makeJobDir,
  randomName,
  removeDir,
  resolveExecutable,
  sandboxEnv,
  spawnSandboxed,
  writeCodeFile,
  type SandboxProcess,
} from './sandbox-process.js';

/** Positional arguments in schema order: strings raw, everything else JSON, missing ones empty. */
export function bashArguments(req: RunRequest): string[] {
  return Object.keys(req.schema.properties).map((name) => {
    const value = Object.hasOwn(req.args, name) ? req.args[name] : undefined;
    if (value === undefined || value === null) return '';
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
}

/**
 * Reads the positional arguments from stdin (NUL-separated) and runs the script with them, so
 * resolved `$var:` secrets never appear in argv where `ps` would show them.
 */
const BASH_LAUNCH = 'mapfile -d "" -t __svc_args; exec </dev/null; set -- "${__svc_args[@]}"; unset __svc_args; . "$0"';

/**
 * Runs a bash script in a fresh process (bash starts fast enough that a warm one buys nothing).
 * stdout is both the log and the result: its last non-empty line, parsed as JSON when it is JSON.
 */
export async function runBash(
  req: RunRequest,
  hooks: RunHooks,
  signal: AbortSignal,
  workRoot: string,
  track: (proc: SandboxProcess) => () => void,
  confiner: Confiner,
): Promise<RunOutcome> {
  const jail = confiner.open(req.limits);
  const jobDir = join(workRoot, randomName('sh'));
  try {
    await makeJobDir(jobDir, jail.uid);
    if (req.shared) await writeSharedFolder(jobDir, jail, req.shared);
    const outcome = await runIn(jobDir, jail, req, hooks, signal, track);
    return req.shared ? await withSharedFolder(outcome, jobDir, jail) : outcome;
  } finally {
    await jail.release();
    await removeDir(jobDir);
  }
}

async function runIn(jobDir: string, jail: Jail, req: RunRequest, hooks: RunHooks, signal: AbortSignal, track: (proc: SandboxProcess) => () => void): Promise<RunOutcome> {
  const guard = new JobGuard(req, signal, () => jail.limitError());
  try {
    const scriptPath = join(jobDir, 'main.sh');
    await writeCodeFile(scriptPath, req.content);
    const proc = spawnSandboxed({
      jail,
      visibleDirs: [jobDir],
      command: resolveExecutable('bash'),
      args: ['-c', BASH_LAUNCH, scriptPath],
      cwd: jobDir,
      env: sandboxEnv(req.env, jobDir),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    proc.child.stdin?.on('error', () => undefined); // a script that exits at once closes it early
    proc.child.stdin?.end(bashArguments(req).map((a) => `${a}\0`).join(''));
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
  const stdout: string[] = [];
  const tail = new OutputTail();
  const log = (text: string) => {
    tail.push(text);
    hooks.onLog(text);
    guard.countOutput(text);
  };
  proc.child.stdout?.setEncoding('utf8').on('data', (text: string) => {
    stdout.push(text);
    log(text);
  });
  proc.child.stderr?.setEncoding('utf8').on('data', log);

  const settled = await settleOneShot(proc, jail, guard, 'bash');
  if (!settled.ok) return settled;
  const { code, signal } = settled.info;
  if (code !== 0) {
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    const output = tail.lastLines();
    return { ok: false, error: { name: 'ExecutionErr', message: `bash ${how}${output ? `:\n${output}` : ''}` } };
  }
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
