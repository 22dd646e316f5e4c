import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s?.stop());

const ws = () => `/api/w/${s.workspace}`;

describe('jobs_u/getupdate: live logs', () => {
  it('shows the first line while the job still runs, then the rest from the offset', async () => {
    await createScript(
      s,
      'u/admin/chatty',
      'bun',
      'export async function main() { console.log("first line"); await new Promise((r) => setTimeout(r, 4000)); console.log("second line"); return 1; }',
    );
    const id = await (await s.fetch(`${ws()}/jobs/run/p/u/admin/chatty`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).text();

    let update: { running: boolean; completed: boolean; new_logs: string; log_offset: number };
    do {
      const res = await s.fetch(`${ws()}/jobs_u/getupdate/${id}?log_offset=0`);
      expect(res.status).toBe(200);
      update = await res.json();
    } while (!update.new_logs.includes('first line') && !update.completed);
    // The first line was readable before the job finished: it was written live, not at completion.
    expect(update).toMatchObject({ running: true, completed: false });
    expect(update.new_logs).not.toContain('second line');

    await waitForJob(s, id);
    const rest = await (await s.fetch(`${ws()}/jobs_u/getupdate/${id}?log_offset=${update.log_offset}`)).json();
    expect(rest.completed).toBe(true);
    expect(rest.running).toBe(false);
    expect(rest.new_logs).toContain('second line');
    expect(rest.new_logs).not.toContain('first line');
    const all = await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();
    expect(rest.log_offset).toBe(all.logs.length);
  });

  it('refuses a bad offset with 400 and an unknown job with 404', async () => {
    const bad = await s.fetch(`${ws()}/jobs_u/getupdate/whatever?log_offset=-1`);
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.field).toBe('log_offset');
    expect((await s.fetch(`${ws()}/jobs_u/getupdate/no-such-job?log_offset=0`)).status).toBe(404);
  });
});
