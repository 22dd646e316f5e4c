import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { CliError, EXIT, type ExitCode } from './errors.js';
import { boundedLines, MAX_ANSWER_BYTES, p, RemoteError, type Remote } from './remote.js';
import type { Io } from './io.js';
import type { JobWithFlowStatus } from '../core/views/job-view.js';
import { LiveOutput, LogLines } from './live-output.js';
import { stepLogFollower } from './flow-steps.js';

/**
 * Running scripts and flows and watching their jobs, through the job API: `jobs/run/...` starts a
 * job, `jobs_u/getupdate_sse/<id>` streams what it streams and its logs while it runs,
 * `jobs_u/get/<id>` has its status, result and logs. A flow's steps are jobs of their own
 * (`parent_job`), followed by flow-steps.ts.
 */

/** A job as `jobs_u/get` answers it: the core's own schema of that answer. */
export type JobView = JobWithFlowStatus;

const FINISHED = new Set(['success', 'failed', 'canceled']);

/** `-d '{"a":1}'` or `-d @args.json` (relative to the current directory): a JSON object. */
export function readArgs(data: string | undefined, cwd: string): Record<string, unknown> {
  if (data === undefined) return {};
  let text = data;
  if (data.startsWith('@')) {
    const file = resolve(cwd, data.slice(1));
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new CliError(EXIT.usage, `-d ${data}: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new CliError(EXIT.usage, `-d: not valid JSON: ${(e as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new CliError(EXIT.usage, '-d: the arguments must be a JSON object, e.g. -d \'{"name": "Ada"}\'');
  return parsed as Record<string, unknown>;
}

/** Starts a run of the script or flow at `path`; a missing one is named, with the other kind's command. */
export async function startRun(remote: Remote, kind: 'script' | 'flow', path: string, args: Record<string, unknown>): Promise<string> {
  const probe = kind === 'script' ? `/scripts/get/p/${p(path)}` : `/flows/get/${p(path)}`;
  if ((await remote.find(probe)) === null) {
    const other = kind === 'script' ? 'flow' : 'script';
    throw new CliError(EXIT.failed, `no ${kind} ${path} in workspace ${remote.conn.workspaceId} (a ${other} runs with svc ${other} run)`);
  }
  // Labelled so the console's run list shows these runs as started from the CLI.
  const runPath = kind === 'script' ? `/jobs/run/p/${p(path)}` : `/jobs/run/f/${p(path)}`;
  const res = await remote.open('POST', runPath, args, { 'x-svc-trigger': 'cli' });
  const text = await remote.text(res, 'POST', runPath);
  try {
    return String(JSON.parse(text));
  } catch {
    return text;
  }
}

export async function getJob(remote: Remote, id: string): Promise<JobView> {
  try {
    return await remote.get<JobView>(`/jobs_u/get/${encodeURIComponent(id)}`);
  } catch (e) {
    if (e instanceof RemoteError && e.status === 404) throw new CliError(EXIT.failed, `no job ${id} in workspace ${remote.conn.workspaceId}`);
    throw e;
  }
}

/** One event of `jobs_u/getupdate_sse` (spec 4.5, with the job's logs from `log_offset`). */
interface JobUpdateEvent {
  new_result_stream?: string;
  new_logs?: string;
  status?: string;
  completed?: boolean;
  /** `timeout`: the server ended the stream before the job (its response limit); resume from the offsets. */
  type?: string;
  stream_offset?: number;
  log_offset?: number;
}

/**
 * Follows a job until it finishes, on stderr: what it streams as it comes, its own log lines as
 * they reach the server, a flow's pauses, and a flow's step logs as the steps run (prefixed by the
 * step id; flow-steps.ts). Answers the finished job.
 */
export async function followJob(remote: Remote, id: string, io: Io, opts: { stepPollMs?: number; waitHint?: (id: string) => Promise<string> } = {}): Promise<JobView> {
  const first = await getJob(remote, id);
  const isFlow = first.job_kind === 'flow';
  const out = new LiveOutput(io);
  const own = new LogLines();
  // A flow's own log lines (rare: its steps have the logs) go under a heading of their own.
  let ownHeading = isFlow ? `--- flow ${id}` : null;
  const ownLines = (lines: string[]) => {
    if (lines.length === 0) return;
    if (ownHeading) out.line(ownHeading);
    ownHeading = null;
    out.line(lines.join('\n'));
  };
  const steps = isFlow ? stepLogFollower(remote, id, out) : undefined;
  let stepsBusy: Promise<void> = Promise.resolve();
  // The wait is announced once, not at every update the stream sends while the flow waits.
  let announced: string | undefined;
  const timer = steps
    ? setInterval(() => {
        stepsBusy = stepsBusy.then(steps.poll).catch(() => undefined);
      }, opts.stepPollMs ?? 500)
    : undefined;
  try {
    if (!FINISHED.has(first.status)) {
      // A stream the server ends before the job (a `timeout` event) is opened again where it stopped.
      const offsets = { stream: 0, log: 0 };
      const open = async () => {
        const query = `fast=true&log_offset=${offsets.log}&stream_offset=${offsets.stream}`;
        const res = await remote.open('GET', `/jobs_u/getupdate_sse/${encodeURIComponent(id)}?${query}`, undefined, { accept: 'text/event-stream' });
        const lines = boundedLines(MAX_ANSWER_BYTES, `the updates of job ${id}`);
        return res.body!.pipeThrough(new TextDecoderStream()).pipeThrough(lines).pipeThrough(new EventSourceParserStream()).getReader();
      };
      let events = await open();
      for (;;) {
        const { done, value: event } = await events.read();
        if (done) break;
        const update = JSON.parse(event.data) as JobUpdateEvent;
        if (update.stream_offset !== undefined) offsets.stream = update.stream_offset;
        if (update.log_offset !== undefined) offsets.log = update.log_offset;
        if (update.type === 'timeout') {
          await events.cancel();
          events = await open();
          continue;
        }
        if (update.new_result_stream) out.stream(update.new_result_stream);
        // The last lines are printed from the stored logs at the end (completion may rewrite them).
        if (update.new_logs && !update.completed) ownLines(own.add(update.new_logs));
        if (update.completed) {
          await events.cancel();
          break;
        }
        if ((update.status === 'suspended' || update.status === 'awaiting_approval') && update.status !== announced) {
          announced = update.status;
          out.line(`flow ${id} is ${update.status === 'suspended' ? 'suspended, waiting for approval' : 'waiting for a ConsentGate decision'} (svc job get ${id} shows where)`);
          const hint = opts.waitHint ? await opts.waitHint(id) : '';
          if (hint) out.line(hint);
        } else if (update.status) {
          announced = update.status;
        }
      }
      out.endLine();
    }
  } finally {
    if (timer) clearInterval(timer);
  }
  await stepsBusy;
  const job = await getJob(remote, id);
  // Every step has ended with the flow: this prints the steps' outcomes and their last lines.
  if (steps) await steps.poll();
  const rest = own.rest(job.logs);
  if (rest) ownLines([rest]);
  return job;
}

export const exitOf = (job: JobView): ExitCode => (job.status === 'success' ? EXIT.ok : EXIT.failed);

export function resultText(result: unknown): string {
  return typeof result === 'string' ? result : JSON.stringify(result, null, 2);
}
