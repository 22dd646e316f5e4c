import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../../functions/adapters/memory/memory-store.js';
import { waitingApprovalStep } from '../../../functions/core/chat/chat-approval-request.js';
import { Rights } from '../../../functions/core/identity/permissions.js';
import type { Principal } from '../../../functions/core/identity/auth.js';
import { newRun } from '../../../functions/core/flows/advance.js';
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
  return { store, step, rights: await Rights.load({ store }, admin, 'w') };
}

describe('chat approval requests', () => {
  it('are taken while the approval step waits', async () => {
    const { store, step, rights } = await suspendedFlow('running');
    await expect(waitingApprovalStep({ store }, rights, step.id)).resolves.toMatchObject({ settings: { required_events: 1 } });
  });

  it('are refused with a 409 once the flow is canceled, before its run is settled', async () => {
    const { store, step, rights } = await suspendedFlow('canceled');
    await expect(waitingApprovalStep({ store }, rights, step.id)).rejects.toMatchObject({ status: 409 });
  });
});
