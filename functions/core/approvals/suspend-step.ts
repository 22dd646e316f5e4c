import { evaluate } from '../flows/expressions.js';
import { ruleGroups } from './approval-rules.js';
import { approverStandings, FLOW_LEVEL, stepRules, tallyApprovals, type Tally } from './approval-count.js';
import { suspendSettings, type FlowModule } from '../flows/definition.js';
import { failFlow } from '../flows/module-outcome.js';
import { expressionScope, finish, type FlowRun, type FlowStep } from '../flows/run-state.js';
import type { WorkerDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/**
 * A suspended step in the interpreter (spec 3): its groups are evaluated once, the pre-approvals
 * its rules accept are counted with its own approvals (a logged-in person once), and approvals,
 * a cancel or the timeout settle it. Returns true when settled, false while it waits, and
 * 'failed' when its groups expression failed the flow.
 */
export async function settleSuspendStep(deps: WorkerDeps, job: Job, run: FlowRun, current: Extract<FlowStep, { kind: 'suspend' }>, module: FlowModule): Promise<boolean | 'failed'> {
  const settings = module.suspend ?? suspendSettings.parse({});
  const rule = settings.user_groups_required;
  if (rule?.type === 'javascript' && current.groups === undefined) {
    const [value] = await evaluate(deps, job, [rule.expr], expressionScope(run)).catch((e: Error) => [e]);
    const groups: unknown = typeof value === 'string' ? [value] : value;
    if (!Array.isArray(groups) || !groups.every((g) => typeof g === 'string')) {
      const message = value instanceof Error ? value.message : 'user_groups_required did not evaluate to a group name or a list of them';
      finish(run, { status: 'failed', result: { error: { name: 'ExpressionError', message, step_id: module.id } } });
      return 'failed';
    }
    current.groups = groups;
  }
  // The step's required count was fixed when the flow reached it.
  const rules = { ...stepRules(settings, ruleGroups(settings, current.groups), job.created_by), required: current.required };
  const own = run.events[current.resume_job] ?? { approvals: [] };
  // Pre-approvals received earlier in the flow count here, and are then used up (spec 3).
  const pre = run.events[FLOW_LEVEL] ?? { approvals: [] };
  const standings = await approverStandings(deps, job.workspace_id, rules, pre.approvals.map((a) => a.approver));
  const tally = tallyApprovals(rules, own, pre, standings);
  current.pre_approvals = tally.eligiblePre.length;
  return settleSuspend(deps.clock.now(), run, current, module, tally);
}

/** Applies approvals, a cancel or a timeout to a suspended step; false while it keeps waiting. */
function settleSuspend(now: Date, run: FlowRun, current: Extract<FlowStep, { kind: 'suspend' }>, module: FlowModule, tally: Tally): boolean {
  const timeout = module.suspend?.timeout;
  if (current.deadline === null && timeout !== undefined) current.deadline = new Date(now.getTime() + timeout * 1000).toISOString();
  const own = run.events[current.resume_job] ?? { approvals: [] };
  const pre = run.events[FLOW_LEVEL] ?? { approvals: [] };
  const { cancel, eligiblePre: eligible, counted: approvals } = tally;
  let error: { name: string; message: string } | null = null;
  if (tally.outcome === 'canceled' && cancel) error = { name: 'Canceled', message: `approval step ${module.id} was canceled by ${cancel.by}${cancel.reason ? `: ${cancel.reason}` : ''}` };
  else if (tally.outcome === 'approved') {
    run.resumes = approvals.map((a) => a.payload);
    run.resume = run.resumes[run.resumes.length - 1] ?? {};
    run.approvers = [...new Set(approvals.map((a) => a.approver))];
    run.consumed = [...(run.consumed ?? []), ...eligible.map((a) => a.resume_id)];
    // A fact of the step, so its pages say it was approved however the count was made up.
    run.events[current.resume_job] = { ...own, resumed: true };
    // Pre-approvals this step's rules did not accept stay for a later step that may.
    if (run.events[FLOW_LEVEL]) run.events[FLOW_LEVEL] = { approvals: pre.approvals.filter((a) => !eligible.includes(a)) };
  } else if (current.deadline !== null && Date.parse(current.deadline) <= now.getTime()) {
    // Recorded as a fact of the step, so the approval page never has to read it out of a message.
    run.events[current.resume_job] = { ...own, timed_out: true };
    const fallback = module.suspend?.default_on_timeout;
    if (fallback) {
      // The flow goes on as if approved with this payload, by nobody.
      run.resume = { ...fallback, timed_out: true };
      run.resumes = [run.resume];
      run.approvers = [];
    } else {
      error = { name: 'SuspendTimeout', message: `approval step ${module.id} timed out with ${approvals.length} of ${current.required} approvals` };
    }
  } else {
    return false;
  }
  run.step = null;
  run.status = 'running';
  if (error) {
    // Spec 3 / 7.6: the flow is canceled, or with continue_on_error (or the suspend's
    // continue_on_disapprove_timeout, as Windmill names it) goes on with an `error` payload.
    // (The flow's failure module runs first, and gives the canceled flow its result.)
    if (!module.continue_on_error && !module.suspend?.continue_on_disapprove_timeout) {
      failFlow(run, module.id, { error: { ...error, step_id: module.id } }, 'canceled');
      return true;
    }
    run.resume = { error };
    run.resumes = [];
    run.approvers = [];
    run.previous_result = { error };
  }
  run.index += 1;
  return true;
}

