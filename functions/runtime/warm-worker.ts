import { writeWorkspaceModules } from './workspace-modules.js';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { JobError, RunHooks, RunOutcome, RunRequest } from '../ports.js';
import type { Jail } from './confinement.js';
import type { ResourceLimits } from './job-limits.js';
import { JobGuard, OutputTail, outputLimitError } from './job-guard.js';
import { JobOutputRouter, type OutputEnd } from './job-output.js';
import { largestCpuSeconds, openFileCount, processWithMostFiles, treeRssBytes } from './process-tree.js';
import { withSharedFolder, writeSharedFolder } from './shared-folder.js';
import { resultWithStream } from '../core/runs/stream-lines.js';
import {
  emptyDirCheck,
  makeJobDir,
  randomName,
  removeDir,
  sandboxEnv,
  setReferenced,
  writeCodeFile,
  type ExitInfo,
  type SandboxProcess,
} from './sandbox-process.js';

const MARKER_GRACE_MS = 1000;

/**
 * Whether `seen` settles within the grace period. The timer is cleared as soon as it does (it
 * usually has already): a timer left for the whole second per job kept each job's promises alive
 * long enough to reach the old generation, which only a full collection frees.
 */
function withinGrace(seen: Promise<void>): Promise<boolean> {
  return new Promise((answer) => {
    const timer = setTimeout(() => answer(false), MARKER_GRACE_MS).unref();
    void seen.then(() => {
      clearTimeout(timer);
      answer(true);
    });
  });
}

/** What a shim reports about the job it serves (the same for every language). */
export type ShimMessage =
  | { type: 'stream'; id: string; chunk: string }
  | { type: 'done'; id: string; ok: true; result: string; streamed: boolean; discard?: boolean }
  | { type: 'done'; id: string; ok: false; error: JobError; discard?: boolean };

type DoneMessage = Extract<ShimMessage, { type: 'done' }>;

interface JobEnd {
  kind: 'done';
  message: DoneMessage;
  markerArrived: boolean;
  counted: boolean;
}

/**
 * The result message that followed the trailer. Only the job's own process knows the trailer, so
 * at worst a job misreports its own result; one that is not a result message fails the job.
 */
function doneMessage(text: string, id: string): DoneMessage {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    message = undefined;
  }
  const m = message as Partial<DoneMessage> | undefined;
  const valid =
    typeof m === 'object' && m !== null && m.type === 'done' && m.id === id && (m.ok === true ? typeof m.result === 'string' : m.ok === false && typeof m.error === 'object' && m.error !== null);
  if (valid) return m as DoneMessage;
  return { type: 'done', id, ok: false, error: { name: 'ExecutionErr', message: 'the process ended the job with a malformed result message' }, discard: true };
}

/** How the parent talks to a shim: a pair of extra pipes (shim-channel.ts). */
export interface ShimChannel {
  send(message: Record<string, unknown>): void;
  /** Each message with the bytes its line took. */
  onMessage(listener: (message: ShimMessage, bytes: number) => void): void;
  /** Told once when the process sent a line longer than `limitLines` allows; nothing more is read. */
  onOverflow(listener: () => void): void;
  limitLines(maxBytes: number): void;
  /** Told how many bytes the process wrote on the channel, as they arrive. */
  onBytes(listener: (bytes: number) => void): void;
  /** Lets the parent exit while the process idles; `ref` undoes it when a job starts. */
  holdEventLoop(hold: boolean): void;
}

export interface WorkerRun {
  outcome: RunOutcome;
  /** False when the process must not serve another job (killed, crashed, broken module). */
  reusable: boolean;
}

interface CurrentJob {
  id: string;
  onStream(chunk: string): void;
  onDone(message: DoneMessage): void;
}

/**
 * One warm child process running a shim that imports one script version on its first job. It
 * starts as a spare without code; `loadCode` gives it its one version for good (a Go process is its
 * version's binary, so it starts with its code). It serves one job
 * at a time: the job's arguments, environment and cwd go in, logs, stream chunks and the result
 * come out.
 */
export class WarmWorker {
  private current: CurrentJob | undefined;
  private readonly output = new JobOutputRouter();
  private exitInfo: ExitInfo | undefined;
  /** Told when the process exits while a job runs (see `exitDuringJob`). */
  private exitWatcher: ((info: ExitInfo) => void) | undefined;
  private disposed: Promise<void> | undefined;
  /** The previous job's directory, kept when that job left it empty: saves a mkdir/chown/rm per run. */
  private spareJobDir: string | undefined;
  private codeLoaded: boolean;
  /** The process of the tree whose open files are counted (see `openFiles`). */
  private interpreterPid: number | undefined;
  private readonly isEmptyDir: (dir: string) => boolean;
  /** Set when the process wrote a reply line past the limit and was killed for it. */
  private overflowed = false;
  /**
   * What the process wrote (output, and replies that are not its job's messages, as bytes) since
   * its job began, or since it ended: past `writtenLimit` the process is killed. A job's own output is bounded by its output limit,
   * but not what a job left running writes after it returned (a timer, a goroutine): read and
   * dropped, it cost the service a core for as long as the idle process was kept.
   */
  private written = 0;
  private writtenLimit = 64 * 1024 * 1024;

  constructor(
    private readonly proc: SandboxProcess,
    private readonly channel: ShimChannel,
    /** Root-owned dir holding the code; job dirs are created inside it. */
    private readonly procDir: string,
    /** The process's own uid and cgroup, given back when it is disposed. */
    private readonly jail: Jail,
    /** Where the shim imports the script from on the first job; empty until `loadCode`. */
    private readonly codePath: string,
    /** True for a process that is its code (a Go binary): it never takes `loadCode`. */
    codeInPlace = false,
  ) {
    this.codeLoaded = codeInPlace;
    this.isEmptyDir = emptyDirCheck(procDir);
    const output = (chunk: Buffer) => {
      this.countWritten(chunk.length);
      this.output.push(chunk);
    };
    proc.child.stdout?.on('data', output);
    // Shims send stderr to stdout; anything left on stderr is the interpreter failing to start.
    proc.child.stderr?.on('data', output);
    channel.onMessage((message, bytes) => this.receive(message, bytes));
    channel.onBytes((bytes) => this.countWritten(bytes));
    // A reply line longer than any result may be: the process goes (its job fails naming the limit).
    channel.onOverflow(() => this.overflow());
    void proc.exited.then((info) => {
      this.exitInfo = info;
      this.exitWatcher?.(info);
    });
  }

  get alive(): boolean {
    return this.exitInfo === undefined && this.disposed === undefined;
  }

  get pid(): number | undefined {
    return this.proc.child.pid;
  }

  /** What the process costs while it idles: its cgroup's charge, else the RSS of its tree. */
  memoryBytes(): number {
    const pid = this.proc.child.pid;
    return this.jail.memoryBytes() ?? (pid === undefined ? 0 : treeRssBytes(pid));
  }

  cpuSeconds(): number {
    const pid = this.proc.child.pid;
    return pid === undefined ? 0 : largestCpuSeconds(pid);
  }

  openFiles(): number {
    const pid = this.proc.child.pid;
    if (pid === undefined) return 0;
    // The interpreter, found once: a warm process's tree does not change while it is kept.
    this.interpreterPid ??= processWithMostFiles(pid);
    return this.interpreterPid === undefined ? 0 : openFileCount(this.interpreterPid);
  }

  diskBytes(): number {
    return this.jail.diskBytes();
  }

  limits(): ResourceLimits {
    return this.jail.limits;
  }

  onExit(listener: () => void): void {
    void this.proc.exited.then(listener);
  }

  setIdle(idle: boolean): void {
    const { child } = this.proc;
    setReferenced([child, child.stdout, child.stderr], !idle);
    this.channel.holdEventLoop(!idle);
  }

  /**
   * Writes the one script version this process will ever import. Once only: a process that held
   * one version never takes another, so no module state crosses scripts.
   */
  async loadCode(code: string, modules: Record<string, string> = {}, prepare?: (procDir: string) => Promise<void>): Promise<void> {
    if (this.codeLoaded) throw new Error('a warm process takes code once');
    this.codeLoaded = true;
    // What the code needs beside it before its first import (a client library it names).
    if (prepare) await prepare(this.procDir);
    // The workspace scripts it imports go beside it, at the paths its imports now name.
    await writeWorkspaceModules(this.procDir, modules);
    await writeCodeFile(this.codePath, code);
  }

  /** Runs one job; `call` carries the language-specific arguments (positional or keyword). */
  async run(req: RunRequest, call: Record<string, unknown>, hooks: RunHooks, signal: AbortSignal): Promise<WorkerRun> {
    if (!this.codeLoaded) throw new Error('a spare process got a job before its code');
    const jobDir = this.spareJobDir ?? join(this.procDir, randomName('job'));
    if (this.spareJobDir) this.spareJobDir = undefined;
    else await makeJobDir(jobDir, this.jail.uid);
    let reusable = false;
    try {
      if (req.shared) await writeSharedFolder(jobDir, this.jail, req.shared);
      const run = await this.runIn(jobDir, req, call, hooks, signal);
      reusable = run.reusable;
      return req.shared ? { ...run, outcome: await withSharedFolder(run.outcome, jobDir, this.jail) } : run;
    } finally {
      if (reusable && this.isEmptyDir(jobDir)) this.spareJobDir = jobDir;
      else await removeDir(jobDir);
    }
  }

  private async runIn(jobDir: string, req: RunRequest, call: Record<string, unknown>, hooks: RunHooks, signal: AbortSignal): Promise<WorkerRun> {
    const guard = new JobGuard(req, signal, () => this.jail.runningLimitError());
    const tail = new OutputTail();
    const chunks: string[] = [];
    const id = randomUUID();
    // 122 random bits each from node's buffered CSPRNG: randomBytes() per job cost a syscall each.
    const ends = { marker: `\u0000svc-end-${randomUUID()}\u0000`, trailer: `\u0000svc-done-${randomUUID()}\u0000` };
    // A chunk or result of the whole output limit, every character escaped (`\u0000`), and its framing.
    this.writtenLimit = 6 * req.maxOutputBytes + 64 * 1024;
    this.written = 0;
    this.channel.limitLines(this.writtenLimit);
    try {
      const outputEnded = this.output.begin(
        ends,
        (text) => {
          tail.push(text);
          hooks.onLog(text);
          guard.countOutput(text);
        },
        (text) => guard.countOutput(text),
      );
      const sent = new Promise<DoneMessage>((onDone) => {
        this.current = {
          id,
          onDone,
          onStream: (chunk) => {
            chunks.push(chunk);
            hooks.onStream(chunk);
            guard.countOutput(chunk);
          },
        };
      });
      this.channel.send({ type: 'job', id, env: sandboxEnv(req.env, jobDir, this.jail), cwd: jobDir, ...ends, ...call });
      const finished = this.jobEnd(id, outputEnded, sent);
      const first = await Promise.race([
        finished,
        guard.stopped.then((error) => ({ kind: 'stopped' as const, error })),
        this.exitDuringJob().then((info) => ({ kind: 'exited' as const, info })),
      ]);
      if (first.kind === 'stopped') {
        await this.dispose();
        return { outcome: { ok: false, error: first.error }, reusable: false };
      }
      if (first.kind === 'exited') {
        await this.proc.closed;
        this.output.flush();
        const limit = this.overflowed ? outputLimitError(req.maxOutputBytes) : this.jail.limitError(first.info);
        await this.dispose();
        return { outcome: { ok: false, error: limit ?? crashError(first.info, tail) }, reusable: false };
      }
      const limit = this.jail.limitError();
      if (limit) {
        await this.dispose();
        return { outcome: { ok: false, error: limit }, reusable: false };
      }
      const run = await this.finish(first.message, chunks, guard, first.counted);
      // A child the job left behind would live on into the next job: the process goes instead.
      return { ...run, reusable: run.reusable && first.markerArrived && !this.jail.hasLeftovers() };
    } finally {
      guard.dispose();
      this.current = undefined;
      this.exitWatcher = undefined;
      this.output.end();
      this.written = 0;
    }
  }

  private countWritten(bytes: number): void {
    this.written += bytes;
    if (this.written > this.writtenLimit) this.overflow();
  }

  private overflow(): void {
    if (this.overflowed) return;
    this.overflowed = true;
    this.proc.kill();
  }

  /**
   * The job's result message and whether its output ended: either both in the output (the trailer
   * and the message after it), or the message on the reply channel and the marker in the output.
   */
  private async jobEnd(id: string, outputEnded: Promise<OutputEnd>, sent: Promise<DoneMessage>): Promise<JobEnd> {
    const first = await Promise.race([outputEnded.then((end) => ({ end })), sent.then((message) => ({ message }))]);
    if ('end' in first) {
      if (first.end.done !== undefined) return { kind: 'done', message: doneMessage(first.end.done, id), markerArrived: true, counted: true };
      return { kind: 'done', message: await sent, markerArrived: true, counted: false };
    }
    // A child that closed its own stdout never sends the marker; don't wait for the timeout.
    const markerArrived = await withinGrace(outputEnded.then(() => undefined));
    return { kind: 'done', message: first.message, markerArrived, counted: false };
  }

  /**
   * The process's exit, as a promise of this job only. Racing `proc.exited` itself would add a
   * reaction to that long-lived promise per job, holding each job's request and guard for as
   * long as the process lives: the service's memory grew with every job a warm process served.
   */
  private exitDuringJob(): Promise<ExitInfo> {
    if (this.exitInfo) return Promise.resolve(this.exitInfo);
    return new Promise((resolveExit) => (this.exitWatcher = resolveExit));
  }

  /** Kills the process group and forgets the code; safe to call more than once. */
  dispose(): Promise<void> {
    this.disposed ??= (async () => {
      this.proc.kill();
      await this.proc.exited;
      await this.jail.release();
      await removeDir(this.procDir);
    })();
    return this.disposed;
  }

  /** `counted`: the result's text was counted against the output limit as it arrived. */
  private async finish(message: DoneMessage, chunks: string[], guard: JobGuard, counted: boolean): Promise<WorkerRun> {
    let outcome: RunOutcome;
    if (!message.ok) {
      // A job that failed with its tmpfs full ran out of its disk quota; its files stay with the process.
      const quota = this.jail.diskQuotaError(message.error.message);
      if (quota) {
        await this.dispose();
        return { outcome: { ok: false, error: quota }, reusable: false };
      }
      outcome = { ok: false, error: message.error };
    } else if (message.streamed) {
      outcome = { ok: true, result: streamResult(chunks.join(''), message.result), streamed: true };
    } else {
      if (!counted) guard.countOutput(message.result);
      outcome = { ok: true, result: JSON.parse(message.result) as unknown, streamed: false };
    }
    if (guard.reason) {
      await this.dispose();
      return { outcome: { ok: false, error: guard.reason }, reusable: false };
    }
    return { outcome, reusable: !message.discard };
  }

  private receive(message: ShimMessage, bytes: number): void {
    const job = this.current;
    if (!job || typeof message !== 'object' || message === null || message.id !== job.id) return;
    // What a message of its job carries is counted against the job's output limit instead: its
    // framing must not fail a job of many small chunks.
    this.written -= bytes;
    if (message.type === 'stream') job.onStream(String(message.chunk));
    else if (message.type === 'done') job.onDone(message);
  }
}

function crashError(info: ExitInfo, tail: OutputTail): JobError {
  if (info.error) return { name: 'ExecutionErr', message: `could not start the interpreter: ${info.error.message}` };
  const how = info.signal ? `was killed by ${info.signal}` : `exited with code ${info.code}`;
  const output = tail.lastLines();
  return { name: 'ExecutionErr', message: `the process ${how} before the job finished${output ? `:\n${output}` : ''}` };
}

/** A generator's result (core/runs/stream-lines.ts): its stream, beside what it returned if anything. */
export function streamResult(stream: string, returnedJson: string): unknown {
  return returnedJson ? resultWithStream(stream, JSON.parse(returnedJson), true) : stream;
}
