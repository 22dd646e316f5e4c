import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, waitForJob, type TestServer } from './harness.js';

/**
 * Names past the stores' key limits, sent through the API (docs/api.md, Errors: names are at most 1,000 bytes). The
 * local shell takes a key of any length; DynamoDB refuses a sort key over 1,024 bytes (bytes, not
 * characters: one Chinese character is 3), so a name the core let through became a 500 on AWS,
 * or a run stored and never started. Both shells must answer alike: a 4xx, or the run done.
 */

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s?.stop());

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's JSON view, read as a client reads it
type Json = Record<string, any>;
const ws = () => `/api/w/${s.workspace}`;
const bytes = (text: string) => Buffer.byteLength(text, 'utf8');
/** 1,200 bytes in 400 characters: within every character count, past DynamoDB's 1,024-byte keys. */
const WIDE = '中'.repeat(400);

async function start(path: string, args: unknown): Promise<string> {
  const res = await s.post(`${ws()}/jobs/run/p/${path}`, args);
  expect(res.status, await res.clone().text()).toBe(201);
  return res.text();
}

describe('a concurrency key filled in from an argument', () => {
  it('runs the job whatever the argument, under a key of at most 1,000 bytes that still tells long keys apart', async () => {
    const created = await s.post(`${ws()}/scripts/create`, {
      path: 'u/admin/per_tenant',
      language: 'bun',
      content: 'export function main(tenant: string) { return tenant.length }',
      concurrent_limit: 1,
      concurrency_key: 'tenant-$args[tenant]',
    });
    expect(created.status, await created.clone().text()).toBe(201);

    // 500 characters, 1,500 bytes: under the old 1,000-character cut, over DynamoDB's key limit.
    const wide = await waitForJob(s, await start('u/admin/per_tenant', { tenant: '中'.repeat(500) }));
    expect(wide, JSON.stringify(wide).slice(0, 500)).toMatchObject({ status: 'success', result: 500 });
    expect(bytes(wide.concurrency_key)).toBeLessThanOrEqual(1000);
    expect(wide.concurrency_key.startsWith('tenant-中')).toBe(true);

    // Two keys that differ only past the cut are two keys, each of its own slot.
    const a = await waitForJob(s, await start('u/admin/per_tenant', { tenant: `${'x'.repeat(3000)}a` }));
    const b = await waitForJob(s, await start('u/admin/per_tenant', { tenant: `${'x'.repeat(3000)}b` }));
    expect([a.status, b.status]).toEqual(['success', 'success']);
    expect(a.concurrency_key).not.toBe(b.concurrency_key);
    expect(bytes(a.concurrency_key)).toBeLessThanOrEqual(1000);

    // A lone surrogate from the argument does not make a key a store would keep as other text.
    const lone = await waitForJob(s, await start('u/admin/per_tenant', { tenant: 'a\ud800b' }));
    expect(lone).toMatchObject({ status: 'success', result: 3, concurrency_key: 'tenant-a\ufffdb' });
  });
});

describe('a name longer than any key, sent where a name is looked up', () => {
  it("a flow's gate naming a chat connection: 400, no connection of that name", async () => {
    const gate = { type: 'consentgate', approvers: ['admin'], message: 'ok?', notify: [{ channel: 'chat', resource: WIDE, channel_id: 'C1' }] };
    const res = await s.post(`${ws()}/flows/create`, { path: 'u/admin/wide_chat', value: { modules: [{ id: 'gate', value: gate }] } });
    const body = await res.text();
    expect(res.status, body).toBe(400);
    expect(body).toContain('has no chat connection');
  });

  it('a route naming its secret variable: 400, no such variable', async () => {
    const script = await s.post(`${ws()}/scripts/create`, { path: 'u/admin/routed', language: 'bun', content: 'export function main() { return 1 }' });
    expect(script.status).toBe(201);
    const res = await s.post(`${ws()}/http_triggers/create`, {
      path: 'u/admin/wide_route',
      route_path: 'wide',
      http_method: 'post',
      script_path: 'u/admin/routed',
      authentication_method: 'api_key',
      secret_variable: `u/admin/${WIDE}`,
    });
    const body = await res.text();
    expect(res.status, body).toBe(400);
    expect(body).toContain('does not exist');
  });

  it("a flow step naming a script version by hash: the flow fails with ScriptNotFound, as for any unknown hash", async () => {
    const step = { id: 'a', value: { type: 'script', path: 'u/admin/routed', hash: WIDE, input_transforms: {} } };
    const created = await s.post(`${ws()}/flows/create`, { path: 'u/admin/wide_hash', value: { modules: [step] } });
    expect(created.status, await created.clone().text()).toBe(201);
    const job: Json = await waitForJob(s, await start('u/admin/wide_hash', {}), 60_000);
    expect(job.status).toBe('failed');
    expect(JSON.stringify(job.result)).toContain('ScriptNotFound');
  });

});
