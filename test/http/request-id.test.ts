import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, type TestServer } from './harness.js';

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

  it("answers a sync webhook's result with one too, as it logs the run", async () => {
    await createScript(s, 'u/admin/answer', 'bun', 'export function main() { return { ok: true }; }');
    // One answer the script shapes itself (spec 7.2), one plain result.
    await createScript(s, 'u/admin/shaped', 'bun', 'export function main() { return { svc_status_code: 202, svc_headers: { "x-shaped": "yes" }, svc_content_type: "text/plain", result: "queued" }; }');
    const run = (path: string) => s.fetch(`/api/w/${s.workspace}/jobs/run_wait_result/p/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const [plain, shaped] = [await run('u/admin/answer'), await run('u/admin/shaped')];
    expect([plain.status, await plain.json()]).toEqual([200, { ok: true }]);
    expect([shaped.status, shaped.headers.get('x-shaped'), await shaped.text()]).toEqual([202, 'yes', 'queued']);
    for (const res of [plain, shaped]) expect(res.headers.get('x-request-id') ?? 'none').toMatch(/^[\w-]{8,}$/);
    expect(plain.headers.get('x-request-id')).not.toBe(shaped.headers.get('x-request-id'));
  });

  it("keeps the caller's own request id", async () => {
    const res = await s.fetch('/api/version', { headers: { 'x-request-id': 'my-trace-123' } });
    expect(res.headers.get('x-request-id')).toBe('my-trace-123');
  });
});
