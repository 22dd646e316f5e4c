import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunHooks, RunOutcome, RunRequest } from '../ports.js';
import { installDenoClient } from './client-libraries.js';
import type { Jail, JailSource } from './confinement.js';
import { DENO_MISSING, denoBinary } from './deno-binary.js';
import { DenoFrameReader, type DenoFrame } from './deno-frames.js';
import type { JobGuard } from './job-guard.js';
import { endedWithoutResult, inOneShotJobDir, oneShotLog, settleOneShot, superviseOneShot, type TrackProcess } from './one-shot.js';
import { copyCodeFile, resolveExecutable, sandboxEnv, writeCodeFile, type SandboxProcess, type SandboxSpawn } from './sandbox-process.js';
import { typeScriptCall } from './typescript-runner.js';
import { streamResult } from './warm-worker.js';

const DENO_SHIM = fileURLToPath(new URL('./shims/deno-shim.mjs', import.meta.url));

/**
 * What a Deno job may do, as Windmill's Deno jobs: the network, its own environment (which is
 * only the job's, see sandboxEnv), and reading and writing its own job directory, where its
 * module cache (DENO_DIR, for `npm:` and `jsr:` imports) lives too. No subprocesses, FFI or sys.
 */
function denoArgs(jobDir: string): string[] {
  return [
    'run',
    '--no-prompt',
    '--no-config',
    '--no-lock',
    '--allow-net',
    '--allow-env',
    `--allow-read=${jobDir}`,
    `--allow-write=${jobDir}`,
    `--import-map=${join(jobDir, 'import_map.json')}`,
    join(jobDir, 'deno-shim.mjs'),
    join(jobDir, 'main.ts'),
  ];
}

/**
 * Runs a `deno` script on a real Deno, in a fresh confined process per job (Deno keeps its
 * compiled modules in the job's DENO_DIR; a warm process would save only the start).
 */
export async function runDeno(
  req: RunRequest,
  hooks: RunHooks,
  signal: AbortSignal,
  track: TrackProcess,
  jails: JailSource,
): Promise<RunOutcome> {
  const deno = denoBinary();
  if (!deno) return { ok: false, error: { name: 'ExecutionErr', message: DENO_MISSING } };
  return inOneShotJobDir(req, jails, 'deno', async (jobDir, jail) => {
    await writeCodeFile(join(jobDir, 'main.ts'), req.content);
    await copyCodeFile(DENO_SHIM, join(jobDir, 'deno-shim.mjs'));
    const client = await installDenoClient(jobDir);
    await writeCodeFile(join(jobDir, 'import_map.json'), JSON.stringify({ imports: { 'svc-client': `file://${client}` } }));
    const marker = `\u0000svc-deno-${randomBytes(16).toString('hex')}:`;
    const env = { ...sandboxEnv(req.env, jobDir, jail), DENO_DIR: join(jobDir, '.deno'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1', DENO_TLS_CA_STORE: 'system' };
    // Through sh only to point fd 2 at the stdout pipe, so the log keeps the order of the lines.
    const spawn = {
      jail,
      visibleDirs: [jobDir],
      command: resolveExecutable('sh'),
      args: ['-c', 'exec "$@" 2>&1', 'sh', deno, ...denoArgs(jobDir)],
      cwd: jobDir,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    } satisfies SandboxSpawn;
    const input = JSON.stringify({ marker, ...typeScriptCall(req) });
    return superviseOneShot(req, signal, jail, track, spawn, input, (proc, guard) => supervise(proc, jail, hooks, guard, marker));
  });
}

async function supervise(proc: SandboxProcess, jail: Jail, hooks: RunHooks, guard: JobGuard, marker: string): Promise<RunOutcome> {
  const log = oneShotLog(hooks, guard);
  const chunks: string[] = [];
  let done: Extract<DenoFrame, { type: 'done' }> | undefined;
  const reader = new DenoFrameReader(
    marker,
    log.write,
    (frame) => {
      if (frame.type === 'stream') {
        chunks.push(frame.chunk);
        hooks.onStream(frame.chunk);
        guard.countOutput(frame.chunk);
      } else done = frame;
    },
  );
  proc.child.stdout?.on('data', (chunk: Buffer) => reader.push(chunk));
  proc.child.stderr?.on('data', (chunk: Buffer) => reader.push(chunk));

  const settled = await settleOneShot(proc, jail, guard, 'deno', () => reader.flush());
  if (!settled.ok) return settled;
  const finished = done as Extract<DenoFrame, { type: 'done' }> | undefined;
  if (!finished) return { ok: false, error: endedWithoutResult('deno', settled.info, log.tail, ' before the job finished') };
  if (!finished.ok) return { ok: false, error: finished.error };
  if (finished.streamed) return { ok: true, result: streamResult(chunks.join(''), finished.result), streamed: true };
  guard.countOutput(finished.result);
  if (guard.reason) return { ok: false, error: guard.reason };
  return { ok: true, result: JSON.parse(finished.result) as unknown, streamed: false };
}
