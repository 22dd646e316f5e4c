import { describe, expect, it } from 'vitest';
import { inProcessService } from './harness.js';

/** A shell without a Go toolchain (this in-memory one, the AWS api Lambda) refuses Go clearly and stores nothing. */
const GO = 'package inner\n\nfunc main(name string) (string, error) {\n\treturn "hi " + name, nil\n}\n';

describe('Go where the shell cannot build it', () => {
  it('refuses a go script and a flow with an inline go step with 400, and keeps neither', async () => {
    const s = await inProcessService();
    const script = await s.post('/api/w/main/scripts/create', { path: 'u/admin/go_hello', language: 'go', content: GO });
    expect(script.status).toBe(400);
    expect((await script.json()).error).toMatchObject({
      code: 'language_unavailable',
      message: 'go scripts cannot be created on this server: it has no go toolchain to build them (docs/scripts.md, Go scripts)',
    });
    expect((await s.fetch('/api/w/main/scripts/get/p/u/admin/go_hello')).status).toBe(404);

    const flow = await s.post('/api/w/main/flows/create', {
      path: 'u/admin/go_flow',
      value: { modules: [{ id: 'a', value: { type: 'rawscript', language: 'go', content: GO, input_transforms: {} } }] },
    });
    expect(flow.status).toBe(400);
    expect((await flow.json()).error).toMatchObject({ code: 'invalid_flow', message: expect.stringContaining('module a: go scripts cannot be created on this server') });
    expect((await s.fetch('/api/w/main/flows/get/u/admin/go_flow')).status).toBe(404);
  });

  it('still answers a syntax error first, with its line and column', async () => {
    const s = await inProcessService();
    const res = await s.post('/api/w/main/scripts/create', { path: 'u/admin/go_bad', language: 'go', content: 'package inner\n\nfunc main() (int, error) {\n\treturn 1 +, nil\n}\n' });
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toBe('content: main.go:4:12: syntax error');
  });
});
