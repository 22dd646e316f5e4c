import { LogLines, type LiveOutput } from './live-output.js';
import type { JobView } from './jobs.js';
import type { Remote } from './remote.js';

/**
 * The steps of a flow run and their logs. A step is a job whose `parent_job` is the flow job; a
 * branch, loop iteration or sub-flow is a flow job of its own, whose steps are the flow's steps too.
 */

const FINISHED = new Set(['success', 'failed', 'canceled']);

/** The script steps under a flow job, at any depth, oldest first. */
export async function stepsOf(remote: Remote, flowId: string): Promise<JobView[]> {
  const jobs = await remote.get<JobView[]>('/jobs/list?per_page=1000');
  const children = new Map<string, JobView[]>();
  for (const job of jobs) if (job.parent_job) children.set(job.parent_job, [...(children.get(job.parent_job) ?? []), job]);
  const steps: JobView[] = [];
  const visit = (id: string) => {
    for (const job of children.get(id) ?? []) {
      if (job.job_kind === 'flow') visit(job.id);
      else steps.push(job);
    }
  };
  visit(flowId);
  return steps.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0));
}

/** What a step is called in the output: its module id, or the script a `script` step runs. */
export const stepLabel = (step: JobView): string => step.flow_module ?? step.script_path ?? '?';

export const stepHeading = (step: JobView): string => `--- step ${stepLabel(step)} (job ${step.id}): ${step.status}`;

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
      for (const step of await stepsOf(remote, flowId)) {
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
        for (const line of printed.addFrom(logs)) out.line(`[${stepLabel(step)}] ${line}`);
      }
    },
  };
}
