import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';

// A server of its own: a one-second instance maximum would cut short the cold first runs of other tests.
let s: TestServer;
beforeAll(async () => {
  s = await startServer({ env: { SVC_SYNC_MAX_WAIT_SECONDS: '1' } });
});
afterAll(() => s?.stop());

describe('instance maximum wait of sync endpoints (spec 8)', () => {
  it('gives up waiting with a clear error naming the job, which goes on to finish', async () => {
    await createScript(s, 'f/hooks/slow', 'bash', 'sleep 3\necho done');
    const res = await s.fetch(`/api/w/${s.workspace}/jobs/run_wait_result/p/f/hooks/slow`, { method: 'POST' });
    expect(res.status).toBe(504);
    const body = await res.json();
    expect(body.error.code).toBe('sync_wait_timeout');
    const job = await waitForJob(s, body.error.job_id);
    expect(job).toMatchObject({ status: 'success', result: 'done' });
  });
});
