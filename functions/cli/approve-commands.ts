import { randomInt } from 'node:crypto';
import { CliError, EXIT, type ExitCode } from './errors.js';
import { connect, type ConnectionFlags } from './connection.js';
import { getJob, readArgs, type JobView } from './jobs.js';
import { RemoteError, type Remote } from './remote.js';
import type { JsonFlag } from './account-commands.js';
import type { Io } from './io.js';
import type { CanceledStepView, ConsentOutcomeView, ResumeOutcomeView, ResumeUrlsView } from '../core/views/approval-views.js';

/**
 * `svc job approve|reject <id>`: a decision on the approval step or ConsentGate a flow waits at,
 * made as the person the token belongs to. The CLI holds no rule of its own: an approval step is
 * decided through a resume URL the server signs for this caller (the same URL the approval page
 * and the client libraries use), a ConsentGate through the consent endpoint; the server's approval
 * rules decide whether the decision counts (who may, self-approval, groups, a person once).
 */

/** Where a flow waits for people, as its job view tells. */
type Waiting = { kind: 'step'; module: string; stepJob: string } | { kind: 'gate' } | null;

function waitingOf(job: JobView): Waiting {
  const suspend = job.flow_status?.suspend;
  if (job.status === 'suspended' && suspend?.step_job) return { kind: 'step', module: suspend.module, stepJob: suspend.step_job };
  if (job.status === 'awaiting_approval') return { kind: 'gate' };
  return null;
}

/** A resume id nobody used: each id counts once, so every decision or link gets its own. */
const freshResumeId = () => randomInt(1, 2 ** 47);

async function signedUrls(remote: Remote, stepJob: string): Promise<ResumeUrlsView> {
  return remote.get<ResumeUrlsView>(`/jobs/resume_urls/${encodeURIComponent(stepJob)}/${freshResumeId()}`);
}

/** The server signs URLs under its internal base; the CLI reaches it through its own. */
const onThisServer = (remote: Remote, url: string) => {
  const u = new URL(url);
  return `${remote.baseUrl}${u.pathname}${u.search}`;
};
const pathOf = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

/** How an approval step's form is filled from the CLI, as the hints and errors say it. */
const FORM_FLAG = `-d '{"field": "value", ...}'`;

export interface DecisionFlags {
  reason?: string;
  data?: string;
}

export async function jobDecide(decision: 'approve' | 'reject', id: string, flags: ConnectionFlags & JsonFlag & DecisionFlags, io: Io): Promise<ExitCode> {
  const remote = connect(flags, io);
  const job = await getJob(remote, id);
  const waiting = waitingOf(job);
  if (!waiting) throw new CliError(EXIT.failed, `job ${id} is ${job.status}: it waits for no approval${job.job_kind === 'flow' ? '' : ' (give the id of the flow run)'}`);
  let outcome: ConsentOutcomeView | ResumeOutcomeView | CanceledStepView;
  try {
    if (waiting.kind === 'gate') {
      if (decision === 'reject' && !flags.reason) throw new CliError(EXIT.usage, 'rejecting a ConsentGate needs --reason');
      outcome = await remote.post<ConsentOutcomeView>(`/api/v1/runs/${encodeURIComponent(id)}/consent`, { decision: decision === 'approve' ? 'approved' : 'rejected', ...(flags.reason ? { reason: flags.reason } : {}) });
    } else {
      const urls = await signedUrls(remote, waiting.stepJob);
      outcome =
        decision === 'approve'
          ? await remote.post<ResumeOutcomeView>(pathOf(urls.resume), readArgs(flags.data, io.cwd))
          : await remote.post<CanceledStepView>(pathOf(urls.cancel), { reason: flags.reason ?? '' });
    }
  } catch (e) {
    // The server's reason (not an approver, already decided, self-approval...) is what the user needs;
    // a form value refused or missing also needs how to give them, which is the CLI's to say.
    if (e instanceof RemoteError && (e.status === 409 || e.status === 400)) {
      const how = e.code === 'invalid_payload' && flags.data === undefined ? ` (give the approval form's values with ${FORM_FLAG})` : '';
      throw new CliError(EXIT.failed, `job ${id}: ${e.message.replace(/^.*? \d{3} /, '')}${how}`);
    }
    throw e;
  }
  if (flags.jsonOutput) io.out(JSON.stringify({ id, decision, outcome }, null, 2));
  else io.out(describe(decision, waiting, outcome));
  return EXIT.ok;
}

function describe(decision: 'approve' | 'reject', waiting: Exclude<Waiting, null>, outcome: ConsentOutcomeView | ResumeOutcomeView | CanceledStepView): string {
  const where = waiting.kind === 'gate' ? 'the ConsentGate' : `step ${waiting.module}`;
  if (decision === 'reject') return `rejected ${where}`;
  if ('approvals_required' in outcome) return `approved ${where} (${outcome.approvals_received} of ${outcome.approvals_required} approvals)`;
  return `approved ${where}`;
}

/**
 * What `svc flow run` prints when the flow stops for people: the approval page to open (or to
 * send), and the commands that decide from here. Best effort: a hint that cannot be made is left out.
 */
export async function approvalHint(remote: Remote, id: string): Promise<string> {
  const job = await getJob(remote, id).catch(() => null);
  const waiting = job && waitingOf(job);
  if (!waiting) return '';
  if (waiting.kind === 'gate') return `  decide with: svc job approve ${id}   or   svc job reject ${id} --reason "..."`;
  const urls = await signedUrls(remote, waiting.stepJob).catch(() => null);
  return [
    ...(urls ? [`  approval page (step ${waiting.module}): ${onThisServer(remote, urls.approvalPage)}`] : []),
    `  decide with: svc job approve ${id} [${FORM_FLAG}: the approval form's values]   or   svc job reject ${id} --reason "..."`,
  ].join('\n');
}
