import { join } from 'node:path';
import type { RunHooks, RunOutcome, RunRequest } from '../ports.js';
import type { Jail, JailSource } from './confinement.js';
import type { JobGuard } from './job-guard.js';
import { endedWithoutResult, inOneShotJobDir, oneShotLog, settleOneShot, superviseOneShot, type TrackProcess } from './one-shot.js';
import { resolveExecutable, sandboxEnv, writeCodeFile, type SandboxProcess, type SandboxSpawn } from './sandbox-process.js';

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
  track: TrackProcess,
  jails: JailSource,
): Promise<RunOutcome> {
  return inOneShotJobDir(req, jails, 'sh', async (jobDir, jail) => {
    const scriptPath = join(jobDir, 'main.sh');
    await writeCodeFile(scriptPath, req.content);
    const spawn = {
      jail,
      visibleDirs: [jobDir],
      command: resolveExecutable('bash'),
      args: ['-c', BASH_LAUNCH, scriptPath],
      cwd: jobDir,
      env: sandboxEnv(req.env, jobDir, jail),
      stdio: ['pipe', 'pipe', 'pipe'],
    } satisfies SandboxSpawn;
    const input = bashArguments(req).map((a) => `${a}\0`).join('');
    return superviseOneShot(req, signal, jail, track, spawn, input, (proc, guard) => supervise(proc, jail, hooks, guard));
  });
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
