import { LogLines, type LiveOutput } from './live-output.js';
import type { JobWithFlowStatus as JobView } from '../core/views/job-view.js';
import type { Remote } from './remote.js';

/**
 * The steps of a flow run and their logs. A step is a job whose `parent_job` is the flow job; a
 * branch, loop iteration or sub-flow is a flow job of its own, whose steps are the flow's steps too.
 */

const FINISHED = new Set(['success', 'failed', 'canceled']);

export interface FlowStep extends JobView {
  /** The flow module the step runs, when known (a `script` step of a branch or loop: not). */
  module: string | null;
  /** What the step is called in the output: its module id, else the script it runs. */
  label: string;
}

/**
 * The script steps under a flow job, at any depth, oldest first. `flow` is the flow job as
 * `jobs_u/get` shows it: its `flow_status.step_jobs` names the module of each of its own steps.
 */
export async function stepsOf(remote: Remote, flow: Pick<JobView, 'id' | 'flow_status'>): Promise<FlowStep[]> {
  const jobs = await remote.get<JobView[]>('/jobs/list?per_page=1000');
  const modules = flow.flow_status?.step_jobs ?? {};
  const children = new Map<string, JobView[]>();
  for (const job of jobs) if (job.parent_job) children.set(job.parent_job, [...(children.get(job.parent_job) ?? []), job]);
  const steps: FlowStep[] = [];
  const visit = (id: string) => {
    for (const job of children.get(id) ?? []) {
      if (job.job_kind === 'flow') visit(job.id);
      else {
        const module = modules[job.id] ?? job.flow_module;
        steps.push({ ...job, module, label: module ?? job.script_path ?? '?' });
      }
    }
  };
  visit(flow.id);
  return steps.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0));
}

export const stepHeading = (step: FlowStep): string => `--- step ${step.label} (job ${step.id}): ${step.status}`;

/**
 * Prints the logs of a flow's steps while they run: each whole line as it reaches the server,
 * prefixed by the step id (steps of branches may run side by side); once a step ends, its
 * heading with the outcome and whatever of its logs was not printed yet.
 */
export function stepLogFollower(remote: Remote, flowId: string, out: LiveOutput) {
  const lines = new Map<string, LogLines>();
  const ended = new Set<string>();
  return {
    async poll(): Promise<void> {
      const flow = await remote.get<JobView>(`/jobs_u/get/${encodeURIComponent(flowId)}`);
      for (const step of await stepsOf(remote, flow)) {
        if (ended.has(step.id)) continue;
        const printed = lines.get(step.id) ?? new LogLines();
        lines.set(step.id, printed);
        const logs = step.logs ?? '';
        if (FINISHED.has(step.status)) {
          ended.add(step.id);
          out.line(stepHeading(step));
          // Completion stores the full text, which may end without a newline.
          const rest = printed.rest(logs);
          if (rest) out.line(rest);
          continue;
        }
        for (const line of printed.addFrom(logs)) out.line(`[${step.label}] ${line}`);
      }
    },
  };
}
