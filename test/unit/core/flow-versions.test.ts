import { describe, expect, it, vi } from 'vitest';
import { MemoryStore } from '../../../functions/adapters/memory/memory-store.js';
import { findFlowVersion } from '../../../functions/core/flows/flows.js';
import { createEntity } from '../../../functions/core/store/entities.js';
import type { FlowVersion } from '../../../functions/core/flows/flow-documents.js';

const clock = { now: () => new Date('2030-01-01T00:00:00.000Z') };

function aVersion(id: number): FlowVersion {
  return {
    id,
    path: 'f/ops/deploy',
    summary: '',
    description: '',
    value: { modules: [{ id: 'a', value: { type: 'rawscript', language: 'bun', content: 'export function main() { return 1; }', input_transforms: {} } }] },
    schema: null,
    created_by: 'alice',
    created_at: clock.now().toISOString(),
  };
}

/** Flow versions never change once stored: a run's turns read theirs from the process, not the store. */
describe('flow versions', () => {
  it('reads a version from the store once per process and shares it frozen, so no caller can change it for the others', async () => {
    const store = new MemoryStore();
    await createEntity(store, clock, 'flow_version', 'ws', String(7).padStart(12, '0'), aVersion(7), 'flow version 7');
    const reads = vi.spyOn(store, 'getEntity');
    const first = await findFlowVersion(store, 'ws', 7);
    const second = await findFlowVersion(store, 'ws', 7);
    expect(first).toMatchObject({ id: 7, path: 'f/ops/deploy' });
    expect(second).toBe(first);
    expect(reads).toHaveBeenCalledTimes(1);
    expect(() => first!.value.modules.push(first!.value.modules[0]!)).toThrow(TypeError);
    expect(() => Object.assign(first!.value.modules[0]!.value, { content: 'changed' })).toThrow(TypeError);
  });

  it('reads a version it did not find again: it may be written later', async () => {
    const store = new MemoryStore();
    expect(await findFlowVersion(store, 'ws', 8)).toBeNull();
    await createEntity(store, clock, 'flow_version', 'ws', String(8).padStart(12, '0'), aVersion(8), 'flow version 8');
    expect(await findFlowVersion(store, 'ws', 8)).toMatchObject({ id: 8 });
  });
});
