import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../../functions/adapters/memory/memory-store.js';
import { queuedJob, startLimited } from '../../../functions/core/jobs/jobs.js';
import type { Entity, Job, OutboxEvent } from '../../../functions/ports.js';

/**
 * A run under `concurrent_limit` is stored held, then takes its place in its key's slots
 * document. When that write fails (on AWS: a key DynamoDB refuses, lost races past the retries,
 * throttling), the caller gets the error; the run must not stay stored `queued` and held, which
 * no slot names and nothing would ever let go.
 */
class SlotsFail extends MemoryStore {
  override createEntity(e: Entity, events?: OutboxEvent[], jobs?: Job[]): Promise<boolean> {
    if (e.kind === 'concurrency_slots') return Promise.reject(new Error('ValidationException: the key is too large'));
    return super.createEntity(e, events, jobs);
  }
}

describe('a held run whose slot cannot be recorded', () => {
  it('is withdrawn (canceled, saying why) while the caller hears the error; nothing is queued', async () => {
    const store = new SlotsFail();
    const queued: string[] = [];
    const deps = { store, clock: { now: () => new Date('2026-01-01T00:00:00Z') }, queue: { enqueue: async (j: Pick<Job, 'id'>) => void queued.push(j.id) } };
    const job = queuedJob('2026-01-01T00:00:00.000Z', {
      kind: 'script',
      script_path: 'u/admin/limited',
      script_hash: 'h1',
      flow_version: null,
      flow_module: null,
      language: 'bun',
      workspace_id: 'main',
      parent_job: null,
      args: {},
      created_by: 'admin',
    });
    await expect(startLimited(deps as never, job, { concurrent_limit: 1 }, 'script')).rejects.toThrow(/ValidationException/);
    const stored = await store.getJob('main', job.id);
    expect(stored).toMatchObject({ status: 'canceled', result: { error: { name: 'Canceled', message: expect.stringContaining('withdrawn') } } });
    expect(JSON.stringify(stored?.result)).not.toContain('ValidationException');
    expect(queued).toEqual([]);
  });
});
