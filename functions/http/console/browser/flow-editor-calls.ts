import { createFlow, flowHistory, getJob, previewFlow, run, updateFlow, validateFlow } from './console-api.js';
import type { FlowValidationView } from '../../../core/views/item-views.js';

/**
 * The flow editor page's calls to the API, typed by its views (console-api.ts) and reading the
 * answers here, so the page's parts (flow-editor-page.ts, flow-editor-run.ts) get plain values:
 * the problems of the flow as it is, the version a save made, a run's end. Part of the flow
 * editor page's bundle.
 */

/** One problem of the flow, as the API's check names it. */
export type FlowProblem = FlowValidationView['errors'][number];

/** The API's own check of the flow as it is now (flows/validate): a save would be refused for each. */
async function check(flow: unknown): Promise<FlowProblem[]> {
  return (await validateFlow(flow)).errors;
}

/** Saves the flow at `path` (a create for a new one): answers the new version's id. */
async function save(isNew: boolean, path: string, body: Record<string, unknown>): Promise<number> {
  if (!isNew) return (await updateFlow(path, body)).id;
  await createFlow(body);
  return (await flowHistory(path))[0].id;
}

interface RunRequest {
  /** The saved flow at `path` rather than the one in the editor. */
  saved: boolean;
  path: string;
  value: unknown;
  schema?: unknown;
  args: Record<string, unknown>;
}

/** Starts the saved flow, or the one in the editor as a test run (jobs/run/preview_flow): its job id. */
function start(r: RunRequest): Promise<string> {
  if (r.saved) return run({ flow: r.path }, r.args, 'console');
  return previewFlow({ path: r.path, value: r.value, ...(r.schema ? { schema: r.schema } : {}), args: r.args });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Follows a run until it ends (its result) or waits for a person (its run page follows it from there). */
async function follow(id: string, onStatus: (status: string) => void): Promise<{ waiting: true } | { waiting: false; result: unknown }> {
  for (;;) {
    const job = await getJob(id);
    onStatus(job.status);
    if (job.status === 'suspended' || job.status === 'awaiting_approval') return { waiting: true };
    if (job.status !== 'queued' && job.status !== 'running') return { waiting: false, result: job.result };
    await sleep(500);
  }
}

export const flowEditorCalls = { check, save, start, follow };
