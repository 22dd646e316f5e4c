import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SHARED_FOLDER, SHARED_FOLDER_MAX_BYTES, type RunOutcome, type SharedFiles } from '../ports.js';
import type { Jail } from './confinement.js';
import { killProcessGroup, sandboxEnv, spawnSandboxed } from './sandbox-process.js';

/**
 * A flow's `./shared` folder in a job's directory (flows with `same_worker`): written before the
 * job runs, read back after. Both happen in a process in the job's own jail (shims/shared-folder.mjs),
 * never as the runner, so the files a job leaves behind can point nowhere the job could not reach.
 */

let script: string | undefined;

export async function writeSharedFolder(jobDir: string, jail: Jail, files: SharedFiles): Promise<void> {
  const { code, stdout, stderr } = await runScript(jobDir, jail, { mode: 'write', dir: join(jobDir, SHARED_FOLDER), files });
  if (code !== 0) throw new Error(`the shared folder could not be written: ${errorLine(stderr)}`);
}

/** The folder's files, or an error naming why they cannot be kept (too large). */
export async function readSharedFolder(jobDir: string, jail: Jail): Promise<{ files: SharedFiles } | { error: string }> {
  const { code, stdout, stderr } = await runScript(jobDir, jail, { mode: 'read', dir: join(jobDir, SHARED_FOLDER), max: SHARED_FOLDER_MAX_BYTES });
  if (code !== 0) return { error: `the shared folder could not be read: ${errorLine(stderr)}` };
  return JSON.parse(stdout) as { files: SharedFiles } | { error: string };
}

/** The outcome with the folder as the job left it; a folder too large to keep fails the job. */
export async function withSharedFolder(outcome: RunOutcome, jobDir: string, jail: Jail): Promise<RunOutcome> {
  const read = await readSharedFolder(jobDir, jail);
  if ('files' in read) return { ...outcome, shared: read.files };
  return { ok: false, error: { name: 'SharedFolderError', message: read.error } };
}

/** The error's own line from what Node printed (not the source excerpt or the version footer). */
function errorLine(stderr: string): string {
  const lines = stderr.trim().split('\n');
  return (lines.findLast((l) => /^\w*Error\b/.test(l)) ?? lines.at(-1) ?? '').replace(/^Error: /, '');
}

async function runScript(jobDir: string, jail: Jail, request: Record<string, unknown>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  script ??= readFileSync(new URL('./shims/shared-folder.mjs', import.meta.url), 'utf8');
  const proc = spawnSandboxed({ jail, visibleDirs: [jobDir], command: process.execPath, args: ['--input-type=module', '-e', script], cwd: jobDir, env: sandboxEnv({}, jobDir, jail), stdio: ['pipe', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  proc.child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
  proc.child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
  proc.child.stdin?.on('error', () => undefined);
  proc.child.stdin?.end(JSON.stringify(request));
  const { code, error } = await proc.exited;
  await proc.closed;
  killProcessGroup(proc.child); // not proc.kill(): the job's own processes share the jail
  if (error) throw error;
  return { code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}
