import type { Job } from '../../ports.js';

/**
 * The `WM_*` variables Windmill's client libraries read (`windmill-client` for TypeScript, `wmill`
 * for Python), given to every job beside svc's own `OV_*` ones and with the same values: a script
 * written for Windmill finds its token, workspace, ids and state path where it looks for them.
 * docs/windmill.md lists them.
 */

/** svc's own flow context of a step job (worker.ts `flowContext`): absent for a job outside a flow. */
export interface FlowContextEnv {
  OV_FLOW_JOB_ID?: string;
  OV_FLOW_PATH?: string;
  OV_ROOT_FLOW_JOB_ID?: string;
}

export function windmillJobEnv(
  job: Pick<Job, 'id' | 'workspace_id' | 'script_path' | 'created_by' | 'kind' | 'flow_module' | 'schedule_path'>,
  token: string,
  baseUrl: string,
  flow: FlowContextEnv,
  /** The step's id in its flow (core/flows/step-id.ts): an inline step's, or a script step's by path. */
  stepId: string | null = job.kind === 'flowstep' && job.flow_module ? job.flow_module : null,
  /** The email of the user the job runs as (read through the store's cache of users, core/store/cached-store.ts). */
  email = '',
): Record<string, string> {
  const statePath = windmillStatePath(job, flow.OV_FLOW_PATH ?? null, stepId);
  return {
    WM_TOKEN: token,
    WM_WORKSPACE: job.workspace_id,
    WM_JOB_ID: job.id,
    WM_JOB_PATH: job.script_path,
    WM_USERNAME: job.created_by,
    WM_EMAIL: email,
    WM_PERMISSIONED_AS: `u/${job.created_by}`,
    // Windmill sets these to "" outside a flow; its clients test them for emptiness.
    WM_FLOW_JOB_ID: flow.OV_FLOW_JOB_ID ?? '',
    WM_ROOT_FLOW_JOB_ID: flow.OV_ROOT_FLOW_JOB_ID ?? '',
    WM_FLOW_PATH: flow.OV_FLOW_PATH ?? '',
    WM_FLOW_STEP_ID: stepId ?? '',
    WM_SCHEDULE_PATH: job.schedule_path ?? '',
    WM_STATE_PATH: statePath,
    WM_STATE_PATH_NEW: statePath,
    // svc resume and approval URLs are built on this same address (core/approvals/resume.ts).
    WM_BASE_URL: baseUrl,
    BASE_URL: baseUrl,
  };
}

/**
 * Where getState/setState keep a script's state: a resource path of its own per script (per flow
 * step in a flow) and per trigger, as Windmill names it: `<script>/user`, `<script>/<user>` when a
 * schedule runs it, `<flow>/<step>_user` in a flow. The job writes it with its own rights.
 */
export function windmillStatePath(
  job: Pick<Job, 'script_path' | 'created_by' | 'schedule_path'>,
  flowPath: string | null,
  stepId: string | null,
): string {
  const trigger = job.schedule_path ? job.created_by : 'user';
  if (flowPath) return `${flowPath}/${stepId ?? 'nostep'}_${trigger}`;
  return `${job.script_path}/${trigger}`;
}
