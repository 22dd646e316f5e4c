import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CodeRunner, Language, RunOutcome, RunRequest } from '../../../functions/ports.js';
import { createLocalRunner, type LocalRunnerOptions } from '../../../functions/runtime/index.js';
import { Confiner } from '../../../functions/runtime/confinement.js';

export const isRoot = process.getuid?.() === 0;

/**
 * Test files run in parallel processes, each with its own runners: one uid range per process (and
 * one Confiner for all of its runners), so "no process of this uid is left" means ours only.
 */
export const TEST_UIDS = { first: 300_000 + (process.pid % 5000) * 100, count: 100 };
const confiner = new Confiner({ uidRange: TEST_UIDS });

/** A runner over a fresh work dir; `dispose` closes it and removes the dir. */
export function makeRunner(options: Partial<LocalRunnerOptions> = {}): { runner: CodeRunner; dispose: () => Promise<void> } {
  const workDir = mkdtempSync(join(tmpdir(), 'svc-runtime-test-'));
  const runner = createLocalRunner({ workDir, confiner, ...options });
  return {
    runner,
    dispose: async () => {
      await runner.close();
      rmSync(workDir, { recursive: true, force: true });
    },
  };
}

export function request(language: Language, content: string, overrides: Partial<RunRequest> = {}): RunRequest {
  return {
    jobId: 'job-1',
    workspaceId: 'ws',
    language,
    scriptHash: `hash-${language}-${content.length}-${hashOf(content)}`,
    content,
    args: {},
    schema: { type: 'object', properties: {}, required: [] },
    env: {},
    timeoutMs: 10_000,
    maxOutputBytes: 1_000_000,
    ...overrides,
  };
}

export function schemaOf(...names: string[]): RunRequest['schema'] {
  return { type: 'object', properties: Object.fromEntries(names.map((n) => [n, {}])), required: [] };
}

/** Records what a run reported, and whether the outcome had resolved when each piece arrived. */
export function recorder() {
  const logs: string[] = [];
  const chunks: string[] = [];
  return {
    logs,
    chunks,
    hooks: { onLog: (text: string) => logs.push(text), onStream: (chunk: string) => chunks.push(chunk) },
    get log() {
      return logs.join('');
    },
  };
}

export async function runOnce(runner: CodeRunner, req: RunRequest, signal = new AbortController().signal) {
  const rec = recorder();
  const outcome = await runner.run(req, rec.hooks, signal);
  return { outcome, log: rec.log, chunks: rec.chunks };
}

export function resultOf(outcome: RunOutcome): unknown {
  if (!outcome.ok) throw new Error(`expected success, got ${outcome.error.name}: ${outcome.error.message}`);
  return outcome.result;
}

export function errorOf(outcome: RunOutcome) {
  if (outcome.ok) throw new Error(`expected failure, got ${JSON.stringify(outcome.result)}`);
  return outcome.error;
}

/**
 * True once the process no longer exists. A killed process whose parent died is a zombie until
 * someone reaps it, and this container's PID 1 does not reap: a zombie counts as gone.
 */
export function isProcessGone(pid: number, startedAt?: string | null): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '';
    // Another process with the same pid: pids wrap at pid_max (32768 here), and a busy CI machine
    // handed a killed job's pid to a new process within seconds.
    if (startedAt && stat.split(' ')[19] !== startedAt) return true;
    return stat.startsWith('Z');
  } catch {
    return true;
  }
}

/** When the process with `pid` started (/proc/<pid>/stat field 22): which process a pid names now. */
export function processStartedAt(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * Confined jobs run in their own PID namespace, where pids mean nothing to the host; as root each
 * process has a uid of its own instead. A job reports `[pid, uid]`; this picks what names the
 * process from outside.
 */
export function processKey([pid, uid]: [number, number]): number {
  return isRoot ? uid : pid;
}

/** `isProcessGone` for a `processKey`: as root, no process of that uid is left (zombies aside). */
export function isKeyGone(key: number): boolean {
  if (!isRoot) return isProcessGone(key);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      const uid = /^Uid:\s+(\d+)/m.exec(status)?.[1];
      const state = /^State:\s+(\S)/m.exec(status)?.[1];
      if (Number(uid) === key && state !== 'Z') return false;
    } catch {
      // exited while we looked
    }
  }
  return true;
}

export async function eventually(check: () => boolean, ms = 3000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return check();
}

function hashOf(text: string): string {
  let h = 0;
  for (const ch of text) h = (h * 31 + ch.charCodeAt(0)) | 0;
  return (h >>> 0).toString(16);
}
