import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './harness.js';

/**
 * Flows that survive the real world (issue 32), over real HTTP in both shells: settings svc does
 * not know are refused naming their path, never dropped.
 */

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s?.stop());

const ws = () => `/api/w/${s.workspace}`;
const ts = (id: string, content: string, extra: Record<string, unknown> = {}) => ({
  id,
  value: { type: 'rawscript', language: 'bun', content, input_transforms: {} },
  ...extra,
});

describe('unknown fields are refused, never dropped', () => {
  it('refuses a flow with a field svc does not know, naming its path, and stores nothing', async () => {
    const res = await s.post(`${ws()}/flows/create`, {
      path: 'u/admin/unknown_field',
      value: { modules: [ts('a', 'export function main() { return 1 }', { retyr: { constant: { attempts: 3, seconds: 1 } } })] },
    });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error.field).toBe('value.modules.0.retyr');
    expect(body.error.message).toContain('value.modules.0.retyr');
    expect((await s.fetch(`${ws()}/flows/get/u/admin/unknown_field`)).status).toBe(404);

    const nested = await s.post(`${ws()}/flows/create`, {
      path: 'u/admin/unknown_field',
      value: { modules: [{ id: 'loop', value: { type: 'forloopflow', iterator: { type: 'static', value: [1] }, modules: [ts('b', 'export function main() {}', { cache_ttl: 60 })] } }] },
    });
    expect(nested.status).toBe(400);
    expect((await nested.json()).error.field).toBe('value.modules.0.value.modules.0.cache_ttl');

    const topLevel = await s.post(`${ws()}/flows/create`, { path: 'u/admin/unknown_field', value: { modules: [] }, dedicated_worker: true });
    expect(topLevel.status).toBe(400);
    expect((await topLevel.json()).error.field).toBe('dedicated_worker');
  });

  it('refuses a script with a field svc does not know', async () => {
    const res = await s.post(`${ws()}/scripts/create`, { path: 'u/admin/unknown_script_field', language: 'bun', content: 'export function main() {}', concurrency_limit: 2 });
    expect(res.status).toBe(400);
    expect((await res.json()).error.field).toBe('concurrency_limit');
  });

  it('keeps the presentation fields of the modelled service as given', async () => {
    const notes = [{ id: 'n1', text: 'read me', color: 'yellow', type: 'free' }];
    const res = await s.post(`${ws()}/flows/create`, {
      path: 'u/admin/with_notes',
      value: { modules: [{ ...ts('a', 'export function main() { return 1 }'), value: { type: 'rawscript', language: 'bun', content: 'export function main() { return 1 }', input_transforms: {}, path: 'u/admin/with_notes/a' } }], notes },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const flow = await (await s.fetch(`${ws()}/flows/get/u/admin/with_notes`)).json();
    expect(flow.value.notes).toEqual(notes);
    expect(flow.value.modules[0].value.path).toBe('u/admin/with_notes/a');
  });
});
