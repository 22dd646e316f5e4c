import { z } from 'zod';
import { badRequest, notFound } from '../errors.js';
import { queuedJob, scopeTexts } from '../jobs.js';
import { findFlowVersion, findLatestFlow, type FlowVersion } from './flows.js';
import type { Principal } from '../auth.js';
import type { Rights } from '../permissions.js';
import type { CoreDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/** Starting a flow run from a webhook (spec 4.1): the flow job; its interpreter does the rest. */

export async function resolveFlowByPath(deps: Pick<CoreDeps, 'store'>, rights: Rights, path: string): Promise<FlowVersion | null> {
  return findLatestFlow(deps.store, rights.workspaceId, path);
}

/** `fv/<version>`: exactly that version, forever (spec 9). */
export async function resolveFlowVersion(deps: Pick<CoreDeps, 'store'>, rights: Rights, version: string): Promise<FlowVersion> {
  const id = Number(version);
  const flow = Number.isSafeInteger(id) && id > 0 ? await findFlowVersion(deps.store, rights.workspaceId, id) : null;
  if (!flow) throw notFound(`flow version ${version}`);
  rights.check('jobs', 'run', flow.path);
  return flow;
}

/** The flow's `schema` validates its inputs: 400 naming the first bad field. */
function validateInputs(flow: FlowVersion, args: Record<string, unknown>): void {
  if (!flow.schema) return;
  let validator: z.ZodType;
  try {
    validator = z.fromJSONSchema(flow.schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    return;
  }
  const parsed = validator.safeParse(args);
  if (parsed.success) return;
  const issue = parsed.error.issues[0];
  const field = issue.path.map(String).join('.') || 'body';
  throw badRequest('invalid_input', `${field}: ${issue.message}`, { field });
}

export async function pushFlowJob(deps: CoreDeps, principal: Principal, flow: FlowVersion, workspaceId: string, args: Record<string, unknown>): Promise<Job> {
  validateInputs(flow, args);
  const job = queuedJob(deps.clock.now().toISOString(), {
    workspace_id: workspaceId,
    kind: 'flow',
    parent_job: null,
    script_path: flow.path,
    script_hash: String(flow.id),
    // A flow has no language of its own; its steps have theirs.
    language: 'nativets',
    args,
    created_by: principal.username,
    created_scopes: scopeTexts(principal),
  });
  await deps.store.insertJob(job);
  await deps.queue.enqueue(job);
  return job;
}
