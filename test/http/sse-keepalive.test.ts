import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';
import { readSse } from './sse-client.js';

let s: TestServer;
const ws = () => `/api/w/${s.workspace}`;

beforeAll(async () => {
  s = await startServer({ env: { SVC_SSE_KEEPALIVE_SECONDS: '1' } });
  await createScript(s, 'f/stream/quiet', 'bash', 'sleep 2.5\necho done');
});
afterAll(() => s?.stop());

describe('SSE keep-alive', () => {
  it('sends comment lines while a job is silent, which SSE clients ignore', async () => {
    const res = await s.fetch(`${ws()}/jobs/run_and_stream/p/f/stream/quiet`, { method: 'POST' });
    const raw = await res.text();
    expect(raw).toMatch(/^: keep-alive$/m);
    const events = await readSse(new Response(raw));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ completed: true, only_result: 'done' });
  });

  it('lets a client hang up mid-stream without harm to the job or the server', async () => {
    const controller = new AbortController();
    const res = await s.fetch(`${ws()}/jobs/run_and_stream/p/f/stream/quiet`, { method: 'POST', signal: controller.signal });
    const reader = res.body!.getReader();
    await reader.read(); // the first keep-alive
    controller.abort();
    const [job] = await (await s.fetch(`${ws()}/jobs/list?script_path_exact=f/stream/quiet`)).json();
    expect(await waitForJob(s, job.id)).toMatchObject({ status: 'success', result: 'done' });
    expect((await s.fetch('/api/version')).status).toBe(200);
  });
});
