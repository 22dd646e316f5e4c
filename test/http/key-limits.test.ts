import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, waitForJob, type TestServer } from './harness.js';

/**
 * Names past the stores' key limits, sent through the API. The local shell takes a key of any
 * length; DynamoDB refuses a sort key over 1,024 bytes (bytes, not characters: one Chinese
 * character is 3), so a name the core let through became a 500 on AWS. Both shells must answer
 * alike: a 4xx, or the run done.
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
