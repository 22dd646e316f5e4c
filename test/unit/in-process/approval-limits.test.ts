import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessService, json, type InProcessService } from './harness.js';

/**
 * What a flow run keeps of its approvals is bounded (docs/approvals.md): a member who mints resume
 * URLs with new resume ids cannot grow one run document without end with large payloads.
 */

let s: InProcessService;
beforeAll(async () => {
  s = await inProcessService();
});

const ws = '/api/w/main';

describe('approval payloads', () => {
  it('refuses with 413 an approval whose payload would take the run past the limit, keeping the run as it was', async () => {
    const res = await s.post(`${ws}/flows/create`, {
      path: 'u/admin/ask_many',
      value: { modules: [{ id: 'ask', value: { type: 'rawscript', language: 'bun', content: 'export function main() { return 1 }', input_transforms: {} }, suspend: { required_events: 100 } }] },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const id = await (await s.post(`${ws}/jobs/run/p/u/admin/ask_many`, {})).text();
    const job = await s.job(id);
    expect(job.status).toBe('suspended');
    const run = await s.deps.store.getEntity('flow_run', 'main', id);
    const stepJob = Object.keys((run!.value as { step_modules: Record<string, string> }).step_modules)[0];
    const approve = async (resumeId: number, payload: unknown) => {
      const urls = await (await s.fetch(`${ws}/jobs/resume_urls/${stepJob}/${resumeId}`)).json();
      return s.fetch(new URL(urls.resume).pathname, json(payload));
    };
    // Each a little over half the limit (1 MiB of JSON): the first fits, the second would not.
    const half = { blob: 'x'.repeat(600_000) };
    expect((await approve(1, half)).status).toBe(200);
    const over = await approve(2, half);
    expect(over.status).toBe(413);
    expect((await over.json()).error).toMatchObject({ code: 'payload_too_large' });
    // Small ones still count.
    expect((await approve(3, { ok: true })).status).toBe(200);
    const stored = (await s.deps.store.getEntity('flow_run', 'main', id))!.value as { events: Record<string, { approvals: unknown[] }> };
    expect(stored.events[stepJob].approvals).toHaveLength(2);
  });
});
