import { CliError, EXIT, type ExitCode } from './errors.js';
import { connect, type ConnectionFlags } from './connection.js';
import { exitOf, followJob, getJob, readArgs, resultText, startRun, type JobView } from './jobs.js';
import { stepHeading, stepsOf } from './flow-steps.js';
import type { JsonFlag } from './account-commands.js';
import type { Io } from './io.js';
import { approvalHint } from './approve-commands.js';

/** `svc script run`, `svc flow run`, `svc job get|logs|cancel`. */

const json = (io: Io, value: unknown) => io.out(JSON.stringify(value, null, 2));

const jobJson = (job: JobView) => ({ id: job.id, status: job.status, success: job.success, result: job.result, logs: job.logs });

export async function runCommand(kind: 'script' | 'flow', path: string, flags: ConnectionFlags & JsonFlag & { data?: string; wait: boolean }, io: Io): Promise<ExitCode> {
  const args = readArgs(flags.data, io.cwd);
  const remote = connect(flags, io);
  const id = await startRun(remote, kind, path, args);
  if (!flags.wait) {
    if (flags.jsonOutput) json(io, { id });
    else io.out(id);
    return EXIT.ok;
  }
  io.err(`started ${kind} ${path}: job ${id}`);
  const job = await followJob(remote, id, io, { waitHint: (jobId) => approvalHint(remote, jobId) });
  if (flags.jsonOutput) json(io, jobJson(job));
  else {
    io.err(`job ${id}: ${job.status}`);
    io.out(resultText(job.result));
  }
  return exitOf(job);
}

export async function jobGet(id: string, flags: ConnectionFlags & JsonFlag, io: Io): Promise<ExitCode> {
  const job = await getJob(connect(flags, io), id);
  if (flags.jsonOutput) {
    json(io, job);
    return EXIT.ok;
  }
  io.out(`job ${job.id}: ${job.status}${job.job_kind === 'flow' ? ' (flow)' : ''}`);
  io.out(`path: ${job.script_path ?? '(inline)'}`);
  io.out(`created: ${job.created_at}${job.completed_at ? `, completed: ${job.completed_at}` : ''}`);
  const suspend = job.flow_status?.suspend;
  if (suspend) io.out(`waiting at step ${suspend.module}: ${JSON.stringify(job.flow_status?.results?.[suspend.module] ?? {})}`);
  if (job.status === 'success' || job.status === 'failed' || job.status === 'canceled') io.out(`result: ${resultText(job.result)}`);
  return EXIT.ok;
}

export async function jobLogs(id: string, flags: ConnectionFlags & JsonFlag & { follow: boolean }, io: Io): Promise<ExitCode> {
  const remote = connect(flags, io);
  if (flags.follow) {
    // Followed logs go to stderr as they come; stdout keeps the machine-readable end.
    const job = await followJob(remote, id, io);
    if (flags.jsonOutput) json(io, jobJson(job));
    return EXIT.ok;
  }
  const job = await getJob(remote, id);
  const steps = job.job_kind === 'flow' ? await stepsOf(remote, job) : [];
  if (flags.jsonOutput) {
    json(io, { id: job.id, status: job.status, logs: job.logs, steps: steps.map((s) => ({ id: s.id, module: s.module, status: s.status, logs: s.logs })) });
    return EXIT.ok;
  }
  for (const s of steps) {
    io.out(stepHeading(s));
    if (s.logs) io.out(s.logs.replace(/\n$/, ''));
  }
  if (job.logs) io.out(job.logs.replace(/\n$/, ''));
  else if (steps.length === 0) io.err(`job ${id} has no logs${job.status === 'queued' || job.status === 'running' ? ' yet (--follow waits for them)' : ''}`);
  return EXIT.ok;
}

export async function jobCancel(id: string, flags: ConnectionFlags & JsonFlag & { reason?: string }, io: Io): Promise<ExitCode> {
  const remote = connect(flags, io);
  await getJob(remote, id);
  try {
    await remote.post(`/jobs_u/queue/cancel/${encodeURIComponent(id)}`, flags.reason ? { reason: flags.reason } : {});
  } catch (e) {
    if (e instanceof Error && / 409 /.test(e.message)) throw new CliError(EXIT.failed, `job ${id} cannot be canceled: ${e.message.replace(/^.*? 409 /, '')}`);
    throw e;
  }
  if (flags.jsonOutput) json(io, { id, canceled: true });
  else io.out(`job ${id} canceled`);
  return EXIT.ok;
}

