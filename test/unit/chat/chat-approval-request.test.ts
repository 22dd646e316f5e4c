import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../../functions/adapters/memory/memory-store.js';
import { stepApprovalMessage, waitingApprovalStep } from '../../../functions/core/chat/chat-approval-request.js';
import { recordStepMessage } from '../../../functions/core/chat/step-message-bound.js';
import { getFlowRun } from '../../../functions/core/flows/run-state.js';
import { parseScopes } from '../../../functions/core/identity/scopes.js';
import { Rights } from '../../../functions/core/identity/permissions.js';
import type { Principal } from '../../../functions/core/identity/auth.js';
import { newRun } from '../../../functions/core/flows/flow-run-document.js';
import type { FlowModule } from '../../../functions/core/flows/definition.js';
import { aJob } from '../../contract/store-fixtures.js';

/**
 * A chat approval is requested only from an approval step that still waits. A flow canceled (or
 * failed) is finished at once, while its run is settled on the flow's next turn: until then the
 * run still shows the step waiting, and the flow job is what says it no longer does.
 */

const admin: Principal = { username: 'root', isSuperadmin: true, workspaceId: null, scopes: null, via: 'token', jobId: null, tokenHash: null };
const at = '2030-01-01T00:00:00.000Z';

async function suspendedFlow(flowStatus: 'running' | 'canceled') {
  const store = new MemoryStore();
  await store.createWorkspace({ id: 'w', name: 'w', created_at: at, object_storage_enabled: false });
  const flow = aJob('w', { kind: 'flow', status: flowStatus, created_by: 'root' });
  const step = aJob('w', { kind: 'flowstep', parent_job: flow.id, status: 'success', created_by: 'root' });
  await store.insertJob(flow);
  await store.insertJob(step);
  const modules = [{ id: 'ask', value: { type: 'rawscript', language: 'bun', content: 'export function main() {}', input_transforms: {} }, suspend: { required_events: 1 } }] as FlowModule[];
  const run = { ...newRun(flow.id, 1, 'u/root/f', modules, {}, {}), status: 'suspended', step: { kind: 'suspend', module: 'ask', resume_job: step.id, required: 1, deadline: null, step_result: null }, step_modules: { [step.id]: 'ask' } };
  await store.createEntity({ kind: 'flow_run', workspace_id: 'w', key: flow.id, value: run, version: 1, created_at: at, updated_at: at });
  return { store, flow, step, rights: await Rights.load({ store }, admin, 'w') };
}

const clock = { now: () => new Date(at) };

describe('chat approval requests', () => {
  it('are taken while the approval step waits', async () => {
    const { store, step, rights } = await suspendedFlow('running');
    await expect(waitingApprovalStep({ store }, rights, step.id)).resolves.toMatchObject({ settings: { required_events: 1 } });
  });

  it('are refused with a 409 once the flow is canceled, before its run is settled', async () => {
    const { store, step, rights } = await suspendedFlow('canceled');
    await expect(waitingApprovalStep({ store }, rights, step.id)).rejects.toMatchObject({ status: 409 });
  });

  it("are taken from the step's own job token and a workspace admin, and refused to anyone else before the job is looked up", async () => {
    const { store, step } = await suspendedFlow('running');
    for (const [username, role] of [['ann', 'admin'], ['rita', 'operator']] as const) {
      await store.createEntity({ kind: 'member', workspace_id: 'w', key: username, value: { username, role, added_by: 'root' }, version: 1, created_at: at, updated_at: at });
    }
    const as = (p: Partial<Principal>) => Rights.load({ store }, { ...admin, isSuperadmin: false, username: 'rita', ...p }, 'w');
    const job = (jobId: string, username = 'root') => ({ via: 'job' as const, jobId, workspaceId: 'w', username, isSuperadmin: username === 'root' });
    await expect(waitingApprovalStep({ store }, await as(job(step.id)), step.id)).resolves.toBeTruthy();
    await expect(waitingApprovalStep({ store }, await as({ username: 'ann' }), step.id)).resolves.toBeTruthy();
    const unknown = '00000000-0000-4000-8000-000000000000';
    const other = '11111111-1111-4111-8111-111111111111';
    const refusals = [
      await as({}), // a member who may read the job
      await as({ username: 'ann', scopes: parseScopes(['*:*']) }), // an admin's scoped token
      await as(job(other)), // another job's token, even an instance admin's job
      await as(job(other, 'ann')), // a workspace admin's other job
    ];
    for (const rights of refusals) {
      for (const id of [step.id, unknown]) await expect(waitingApprovalStep({ store }, rights, id)).rejects.toMatchObject({ status: 403 });
    }
  });

  it('record at most the bound of messages per step, however many requests race', async () => {
    const { store, flow, step } = await suspendedFlow('running');
    const ask = (i: number) => stepApprovalMessage('slack', 'slack', 'C0', step.id, i, { message: `ask ${i}` });
    const settled = await Promise.allSettled(Array.from({ length: 14 }, (_, i) => recordStepMessage({ store, clock }, 'w', flow.id, ask(i), 10)));
    expect(settled.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
    expect(settled.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.code)).toEqual(Array(4).fill('too_many_chat_messages'));
    expect((await getFlowRun({ store }, 'w', flow.id))!.chat).toHaveLength(10);
  });
});
