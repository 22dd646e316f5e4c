import { badRequest } from '../common/errors.js';
import { jsonSchemaValidator, type JsonSchemaValidator } from '../common/json-schema.js';
import { queuedJob, scopeTexts, startLimited, type JobOrigin } from '../jobs/jobs.js';
import { definedRunSettings } from '../jobs/run-settings.js';
import { newJobId } from '../common/crypto.js';
import { answerFromCache } from '../jobs/result-cache.js';
import { admitRun } from '../jobs/run-admission.js';
import { flowJobTarget } from '../jobs/run-target.js';
import type { FlowVersion } from './flow-documents.js';
import type { Principal } from '../identity/auth.js';
import type { CoreDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/** Starting a flow run from a webhook (spec 4.1): the flow job; its interpreter does the rest. */

/** The flow's `schema` validates its inputs: 400 naming the first bad field. */
function validateInputs(flow: FlowVersion, args: Record<string, unknown>): void {
  if (!flow.schema) return;
  let validator: JsonSchemaValidator;
  try {
    validator = jsonSchemaValidator(flow.schema);
  } catch {
    return;
  }
  const issue = validator.check(args);
  if (!issue) return;
  const field = issue.path.map(String).join('.') || 'body';
  throw badRequest('invalid_input', `${field}: ${issue.message}`, { field });
}

export async function pushFlowJob(
  deps: CoreDeps,
  principal: Principal,
  flow: FlowVersion,
  workspaceId: string,
  args: Record<string, unknown>,
  id: string = newJobId(),
  origin: JobOrigin = {},
): Promise<Job> {
  validateInputs(flow, args);
  // Refused before anything is stored: too deep a chain of runs started by jobs, or a full backlog.
  const lineage = await admitRun(deps, principal, workspaceId);
  const job = queuedJob(
    deps.clock.now().toISOString(),
    {
      id,
      workspace_id: workspaceId,
      ...flowJobTarget(flow.path, flow.id),
      parent_job: null,
      ...lineage,
      args,
      created_by: principal.username,
      created_scopes: scopeTexts(principal),
      ...(flow.value.priority ? { priority: flow.value.priority } : {}),
    },
    origin,
  );
  const ttl = flow.value.cache_ttl;
  if (ttl) {
    const cached = await answerFromCache(deps, job, ttl);
    if (cached) return cached;
  }
  if (await startLimited(deps, job, definedRunSettings(flow.value), 'flow')) return job;
  await deps.store.insertJob(job);
  await deps.queue.enqueue(job);
  return job;
}
