import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { CliError, EXIT, type ExitCode } from './errors.js';
import { p, RemoteError, type Remote } from './remote.js';
import type { Io } from './io.js';

/**
 * Running scripts and flows and watching their jobs, through the job API: `jobs/run/...` starts a
 * job, `jobs_u/getupdate_sse/<id>` streams what it streams while it runs, `jobs_u/get/<id>` has
 * its status, result and logs. A flow's steps are jobs of their own (`parent_job`): their logs are
 * printed as each step finishes.
 */

export interface JobView {
  id: string;
  status: string;
  success: boolean | null;
  result: unknown;
  logs: string;
  job_kind: string;
  parent_job: string | null;
  flow_module?: string | null;
  script_path: string | null;
  created_at: string;
  completed_at: string | null;
  flow_status?: { suspend?: { module: string }; results?: Record<string, unknown> };
}

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
  const id = await remote.post<string>(kind === 'script' ? `/jobs/run/p/${p(path)}` : `/jobs/run/f/${p(path)}`, args);
  return String(id);
}

export async function getJob(remote: Remote, id: string): Promise<JobView> {
  try {
    return await remote.get<JobView>(`/jobs_u/get/${encodeURIComponent(id)}`);
  } catch (e) {
    if (e instanceof RemoteError && e.status === 404) throw new CliError(EXIT.failed, `no job ${id} in workspace ${remote.conn.workspaceId}`);
    throw e;
  }
}

/** The step jobs of a flow job, oldest first. */
export async function stepsOf(remote: Remote, flowId: string): Promise<JobView[]> {
  const jobs = await remote.get<JobView[]>('/jobs/list?per_page=1000');
  return jobs.filter((j) => j.parent_job === flowId).sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0));
}

export function printLogs(io: Io, heading: string | null, logs: string): void {
  if (!logs) return;
  if (heading) io.err(heading);
  io.err(logs.replace(/\n$/, ''));
}

const stepHeading = (step: JobView) => `--- step ${step.flow_module ?? '?'} (job ${step.id}): ${step.status}`;

/**
 * Follows a job until it finishes: what it streams is printed as it comes (stderr), a flow's
 * pauses are announced, each flow step's logs are printed when the step ends, the job's own logs
 * at the end. Answers the finished job.
 */
export async function followJob(remote: Remote, id: string, io: Io, opts: { stepPollMs?: number } = {}): Promise<JobView> {
  const first = await getJob(remote, id);
  const isFlow = first.job_kind === 'flow';
  const shown = new Set<string>();
  const showFinishedSteps = async () => {
    for (const step of await stepsOf(remote, id)) {
      if (!FINISHED.has(step.status) || shown.has(step.id)) continue;
      shown.add(step.id);
      io.err(stepHeading(step));
      printLogs(io, null, step.logs);
    }
  };
  let stepsBusy: Promise<void> = Promise.resolve();
  // The job's own logs are printed as they reach the store (jobs_u/getupdate), not only at the end.
  const ownLogs = liveLogPrinter(remote, id, io);
  let logsBusy: Promise<void> = Promise.resolve();
  const logTimer = setInterval(() => {
    logsBusy = logsBusy.then(ownLogs.poll).catch(() => undefined);
  }, opts.stepPollMs ?? 500);
  const timer = isFlow
    ? setInterval(() => {
        stepsBusy = stepsBusy.then(showFinishedSteps).catch(() => undefined);
      }, opts.stepPollMs ?? 500)
    : undefined;
  try {
    if (!FINISHED.has(first.status)) {
      const res = await remote.open('GET', `/jobs_u/getupdate_sse/${encodeURIComponent(id)}?fast=true`, undefined, { accept: 'text/event-stream' });
      // What the job streams is written as it comes; a line of ours starts on a fresh line.
      let midLine = false;
      const endLine = () => {
        if (midLine) io.stream('\n');
        midLine = false;
      };
      const events = res.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
      for (;;) {
        const { done, value: event } = await events.read();
        if (done) break;
        const update = JSON.parse(event.data) as { new_result_stream?: string; status?: string; completed?: boolean };
        if (update.new_result_stream) {
          io.stream(update.new_result_stream);
          midLine = !update.new_result_stream.endsWith('\n');
        }
        if (update.completed) {
          await events.cancel();
          break;
        }
        if (update.status === 'suspended' || update.status === 'awaiting_approval') {
          endLine();
          io.err(`flow ${id} is ${update.status === 'suspended' ? 'suspended, waiting for approval' : 'waiting for a ConsentGate decision'} (svc job get ${id} shows where)`);
        }
      }
      endLine();
    }
  } finally {
    if (timer) clearInterval(timer);
    clearInterval(logTimer);
  }
  await stepsBusy;
  await logsBusy;
  const job = await getJob(remote, id);
  if (isFlow) await showFinishedSteps();
  const rest = job.logs.slice(ownLogs.offset());
  printLogs(io, isFlow && rest && ownLogs.offset() === 0 ? `--- flow ${id}` : null, rest);
  return job;
}

/** Prints a job's logs from where the last poll stopped; whole lines only, the rest waits. */
function liveLogPrinter(remote: Remote, id: string, io: Io) {
  let printed = 0;
  return {
    offset: () => printed,
    poll: async () => {
      const u = await remote.get<{ new_logs: string; log_offset: number; completed: boolean }>(`/jobs_u/getupdate/${encodeURIComponent(id)}?log_offset=${printed}`);
      // The final text is printed from `printed` once the job is done (completion may rewrite it).
      if (u.completed) return;
      const end = u.new_logs.lastIndexOf('\n');
      if (end < 0) return;
      io.err(u.new_logs.slice(0, end));
      printed += end + 1;
    },
  };
}

export const exitOf = (job: JobView): ExitCode => (job.status === 'success' ? EXIT.ok : EXIT.failed);

export function resultText(result: unknown): string {
  return typeof result === 'string' ? result : JSON.stringify(result, null, 2);
}
