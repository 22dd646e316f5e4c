import { expect, it } from 'vitest';
import { inProcessService } from './harness.js';

it('runs a script sync through the app', async () => {
  const s = await inProcessService();
  const r = await s.post('/api/w/main/scripts/create', { path: 'u/admin/add', language: 'bun', content: 'export function main(a: number, b: number) { console.log("adding"); return a + b }' });
  expect(r.status, await r.clone().text()).toBe(201);
  const run = await s.post('/api/w/main/jobs/run_wait_result/p/u/admin/add', { a: 2, b: 3 });
  expect(run.status, await run.clone().text()).toBe(200);
  expect(await run.json()).toBe(5);
});
