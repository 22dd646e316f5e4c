import { z } from 'zod';
import { ApiError, badRequest, conflict, notFound } from '../common/errors.js';
import { getEntityValue, updateEntity } from '../store/entities.js';
import { parseBody } from '../common/validation.js';
import { assertPerson, tokenKindBlocker } from './approval-rules.js';
import { gateRules, memberRefusal, refusalError } from './approval-count.js';
import { findModule } from '../flows/definition.js';
import { getFlowRun, type FlowRun, type GateDecision } from '../flows/run-state.js';
import { awaitedJobs } from '../flows/awaited-jobs.js';
import { refuseReferences } from '../workspace/bindings.js';
import type { Principal } from '../identity/auth.js';
import type { CoreDeps } from '../deps.js';
import type { Job } from '../../ports.js';

/**
 * The consent endpoint's rules (spec 4.7, 6.3): `POST /api/v1/runs/{run_id}/consent`. Only the
 * gate's approvers decide, the triggering user only when the gate allows it, and exactly one
 * decision wins: it is stored with a conditional write that fails once another decision (or the
 * timeout) is in, and the loser gets 409.
 */

export const consentBody = z.strictObject({
  decision: z.enum(['approved', 'rejected']),
  reason: z.string().max(2000).optional(),
});

export interface ConsentOutcome {
  run_id: string;
  /** The run's status once the decision takes effect. */
  status: 'running' | 'failed';
  decision: GateDecision;
}

export async function decideConsent(deps: Pick<CoreDeps, 'store' | 'clock' | 'flows'>, principal: Principal, runId: string, body: unknown): Promise<ConsentOutcome> {
  const input = parseBody(consentBody, body);
  const reason = input.reason?.trim() ?? '';
  if (input.decision === 'rejected' && !reason) throw badRequest('invalid_request', 'reason: a rejection needs a reason', { field: 'reason' });
  // The decision reaches the flow's next steps (`results.<gate>`, `resume`), which run as the flow's creator.
  refuseReferences({ reason }, "a decision reaches the flow's next steps, which would read it as the flow's creator. Write the reason itself");
  const { flowJob, moduleId } = await consentDecider(deps, principal, runId);
  const decision: GateDecision = { decision: input.decision, approver: principal.username, reason, at: deps.clock.now().toISOString() };
  await updateEntity(deps.store, deps.clock, 'flow_run', flowJob.workspace_id, flowJob.id, `run ${runId}`, (current) => {
    const state = current.gates?.[moduleId];
    const waiting = current.status === 'awaiting_approval' && current.step?.kind === 'gate' && current.step.module === moduleId;
    if (!waiting || !state || state.decision) throw conflict(`run ${runId} is not awaiting approval: ${state?.decision ? `already ${state.decision.decision}` : 'it is no longer waiting'}`);
    return { ...current, gates: { ...current.gates, [moduleId]: { ...state, decision } } };
  });
  await deps.flows.wake(flowJob.workspace_id, flowJob.id);
  return { run_id: flowJob.id, status: decision.decision === 'approved' ? 'running' : 'failed', decision };
}

/**
 * The gate `principal` may decide on run `runId`: 404 for a run they cannot see, 409 when it waits
 * at no gate, 403 when they are not its approver or triggered the run and may not decide it.
 */
export async function consentDecider(deps: Pick<CoreDeps, 'store'>, principal: Principal, runId: string): Promise<{ flowJob: Job; moduleId: string }> {
  // A decision is a person's (approval-rules.ts): the kind of credential first, then for the run's workspace.
  const kind = tokenKindBlocker(principal);
  if (kind) throw kind;
  const top = await findRun(deps, principal, runId);
  await assertPerson(deps, principal, top.workspace_id);
  const { job: flowJob, run } = await gateHolder(deps, top);
  const moduleId = run ? gateOf(run) : null;
  const module = run && moduleId ? findModule(run.modules, moduleId) : undefined;
  if (!run || !moduleId || module?.value.type !== 'consentgate') throw conflict(`run ${runId} is not awaiting approval`);
  // Who may decide is who may approve under the gate's rules (approval-count.ts), as for a suspend step.
  const rules = gateRules(moduleId, module.value, flowJob.created_by);
  const refusal = await memberRefusal(deps, flowJob.workspace_id, rules, principal.username);
  if (refusal) throw refusalError(refusal, rules, principal.username, flowJob.workspace_id);
  return { flowJob, moduleId };
}

/**
 * The flow job whose gate decides: the run itself, or the branch, iteration or sub-flow it waits
 * on that is at a gate (so a gate inside a branch is decided through the top run's id too).
 */
async function gateHolder(deps: Pick<CoreDeps, 'store'>, top: Job): Promise<{ job: Job; run: FlowRun | null }> {
  const run = await getFlowRun(deps, top.workspace_id, top.id);
  return (run && (await findGate(deps, top, run, 0))) ?? { job: top, run };
}

async function findGate(deps: Pick<CoreDeps, 'store'>, job: Job, run: FlowRun, depth: number): Promise<{ job: Job; run: FlowRun } | null> {
  if (run.step?.kind === 'gate') return { job, run };
  if (depth >= MAX_NESTING) return null;
  for (const awaited of awaitedJobs(run).filter((j) => j.kind === 'flow')) {
    const inner = await deps.store.getJob(job.workspace_id, awaited.id);
    const innerRun = inner && (await getFlowRun(deps, inner.workspace_id, inner.id));
    const found = innerRun && (await findGate(deps, inner, innerRun, depth + 1));
    if (found) return found;
  }
  return null;
}

const MAX_NESTING = 20;

/** The gate a run waits at, else the last one it reached (so a late decision gets 409, not 404). */
function gateOf(run: FlowRun): string | null {
  if (run.step?.kind === 'gate') return run.step.module;
  const reached = Object.keys(run.gates ?? {});
  return reached[reached.length - 1] ?? null;
}

/**
 * A run id names a flow job in one of the caller's workspaces; a job elsewhere is as unknown as
 * one that does not exist. Job ids are unique in the instance: the job is one read by its id, and
 * its workspace's membership one more, whatever the number of workspaces.
 */
async function findRun(deps: Pick<CoreDeps, 'store'>, principal: Principal, runId: string): Promise<Job> {
  if (!/^[0-9a-f-]{36}$/i.test(runId)) throw notFound(`run ${runId}`);
  const job = await deps.store.findJobById(runId);
  if (!job || job.kind !== 'flow') throw notFound(`run ${runId}`);
  // In any workspace the person belongs to, whatever the token is limited to: a token limited to
  // another workspace is then refused by name (403), not told the run does not exist.
  const member = principal.isSuperadmin || (await getEntityValue(deps.store, 'member', job.workspace_id, principal.username));
  if (!member) throw notFound(`run ${runId}`);
  return job;
}
