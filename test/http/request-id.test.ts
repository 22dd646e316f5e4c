import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './harness.js';

/** Every answer names its request, so a user's report can be matched with the service's log lines. */
let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(async () => {
  await s?.stop();
});

describe('request ids', () => {
  it('answers each request with its own X-Request-Id, on success and on error', async () => {
    const ok = await s.fetch('/api/version');
    const missing = await s.fetch(`/api/w/${s.workspace}/scripts/get/p/u/admin/nothing-here`);
    expect(ok.status).toBe(200);
    expect(missing.status).toBe(404);
    const ids = [ok.headers.get('x-request-id'), missing.headers.get('x-request-id')];
    for (const id of ids) expect(id).toMatch(/^[\w-]{8,}$/);
    expect(ids[0]).not.toBe(ids[1]);
  });

  it("keeps the caller's own request id", async () => {
    const res = await s.fetch('/api/version', { headers: { 'x-request-id': 'my-trace-123' } });
    expect(res.headers.get('x-request-id')).toBe('my-trace-123');
  });
});
