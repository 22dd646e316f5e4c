import { describe, expect, it } from 'vitest';
import { MAX_SCHEDULES_PER_WORKSPACE } from '../../../functions/core/triggers/schedules.js';
import { createScript, inProcessService } from './harness.js';

/**
 * A workspace holds at most MAX_SCHEDULES_PER_WORKSPACE schedules (docs/schedules.md): a member,
 * or a scheduled script creating schedules with its job token, cannot grow the ticker's work
 * without end for every workspace.
 */

describe('schedules per workspace', () => {
  it('refuses a create beyond the limit with 409 too_many_schedules, and takes one again once one is deleted', async () => {
    const s = await inProcessService();
    await createScript(s, 'u/admin/work', 'export function main() { return 1 }');
    const create = (path: string) => s.post('/api/w/main/schedules/create', { path, schedule: '0 0 * * * *', script_path: 'u/admin/work', enabled: false });
    const first = await create('u/admin/s0');
    expect(first.status, await first.clone().text()).toBe(201);
    // The rest as stored documents, copies of the first: the limit counts what the workspace holds.
    const stored = (await s.store.getEntity('schedule', 'main', 'u/admin/s0'))!;
    for (let i = 1; i < MAX_SCHEDULES_PER_WORKSPACE; i++) {
      const path = `u/admin/s${i}`;
      expect(await s.store.createEntity({ ...stored, key: path, version: 1, value: { ...(stored.value as object), path } })).toBe(true);
    }
    const over = await create('u/admin/one_more');
    expect(over.status).toBe(409);
    expect((await over.json()).error).toMatchObject({ code: 'too_many_schedules' });
    expect((await s.fetch('/api/w/main/schedules/get/u/admin/one_more')).status).toBe(404);

    expect((await s.fetch('/api/w/main/schedules/delete/u/admin/s1', { method: 'DELETE' })).status).toBeLessThan(300);
    expect((await create('u/admin/one_more')).status).toBe(201);
  });
});
