import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunHooks, RunOutcome, RunRequest } from '../ports.js';
import { installDenoClient } from './client-libraries.js';
import type { Confiner, Jail } from './confinement.js';
import { DENO_MISSING, denoBinary } from './deno-binary.js';
import { DenoFrameReader, type DenoFrame } from './deno-frames.js';
import { JobGuard, OutputTail } from './job-guard.js';
import { settleOneShot } from './one-shot.js';
import {
  copyCodeFile,
  makeJobDir,
  randomName,
  removeDir,
  resolveExecutable,
  sandboxEnv,
  spawnSandboxed,
  writeCodeFile,
  type SandboxProcess,
} from './sandbox-process.js';
import { withSharedFolder, writeSharedFolder } from './shared-folder.js';
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
  workRoot: string,
  track: (proc: SandboxProcess) => () => void,
  confiner: Confiner,
): Promise<RunOutcome> {
  const deno = denoBinary();
  if (!deno) return { ok: false, error: { name: 'ExecutionErr', message: DENO_MISSING } };
  const jail = confiner.open(req.limits);
  const jobDir = join(workRoot, randomName('deno'));
  try {
    await makeJobDir(jobDir, jail.uid);
    if (req.shared) await writeSharedFolder(jobDir, jail, req.shared);
    await writeCodeFile(join(jobDir, 'main.ts'), req.content);
    await copyCodeFile(DENO_SHIM, join(jobDir, 'deno-shim.mjs'));
    const client = await installDenoClient(jobDir);
    await writeCodeFile(join(jobDir, 'import_map.json'), JSON.stringify({ imports: { 'svc-client': `file://${client}` } }));
    const outcome = await runIn(deno, jobDir, jail, req, hooks, signal, track);
    return req.shared ? await withSharedFolder(outcome, jobDir, jail) : outcome;
  } finally {
    await jail.release();
    await removeDir(jobDir);
  }
}

async function runIn(
  deno: string,
  jobDir: string,
  jail: Jail,
  req: RunRequest,
  hooks: RunHooks,
  signal: AbortSignal,
  track: (proc: SandboxProcess) => () => void,
): Promise<RunOutcome> {
  const guard = new JobGuard(req, signal, () => jail.limitError());
  try {
    const marker = `\u0000svc-deno-${randomBytes(16).toString('hex')}:`;
    const env = { ...sandboxEnv(req.env, jobDir), DENO_DIR: join(jobDir, '.deno'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1', DENO_TLS_CA_STORE: 'system' };
    // Through sh only to point fd 2 at the stdout pipe, so the log keeps the order of the lines.
    const proc = spawnSandboxed({
      jail,
      visibleDirs: [jobDir],
      command: resolveExecutable('sh'),
      args: ['-c', 'exec "$@" 2>&1', 'sh', deno, ...denoArgs(jobDir)],
      cwd: jobDir,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    proc.child.stdin?.on('error', () => undefined);
    proc.child.stdin?.end(JSON.stringify({ marker, ...typeScriptCall(req) }));
    const untrack = track(proc);
    try {
      return await supervise(proc, jail, hooks, guard, marker);
    } finally {
      untrack();
    }
  } finally {
    guard.dispose();
  }
}

async function supervise(proc: SandboxProcess, jail: Jail, hooks: RunHooks, guard: JobGuard, marker: string): Promise<RunOutcome> {
  const tail = new OutputTail();
  const chunks: string[] = [];
  let done: Extract<DenoFrame, { type: 'done' }> | undefined;
  const reader = new DenoFrameReader(
    marker,
    (text) => {
      tail.push(text);
      hooks.onLog(text);
      guard.countOutput(text);
    },
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
  const { code, signal } = settled.info;
  const finished = done as Extract<DenoFrame, { type: 'done' }> | undefined;
  if (!finished) {
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    const output = tail.lastLines();
    return { ok: false, error: { name: 'ExecutionErr', message: `deno ${how} before the job finished${output ? `:\n${output}` : ''}` } };
  }
  if (!finished.ok) return { ok: false, error: finished.error };
  if (finished.streamed) return { ok: true, result: streamResult(chunks.join(''), finished.result), streamed: true };
  guard.countOutput(finished.result);
  if (guard.reason) return { ok: false, error: guard.reason };
  return { ok: true, result: JSON.parse(finished.result) as unknown, streamed: false };
}
