import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';

/**
 * Attack (issue 30): a script whose result nests 100,000 levels deep must not break the service
 * (a stack overflow while handling it left the job `running` for ever). The job fails with an
 * error saying why, and the service goes on answering.
 */

let s: TestServer;
const ws = () => `/api/w/${s.workspace}`;
const DEPTH = 100_000;

beforeAll(async () => {
  s = await startServer();
  // A bash job's result is its last line of output, parsed by the service: any depth gets there.
  await createScript(s, 'u/admin/deep_bash', 'bash', `head -c ${DEPTH} /dev/zero | tr '\\0' '['; head -c ${DEPTH} /dev/zero | tr '\\0' ']'; echo`);
  // Deep enough to break recursive walks in the service, shallow enough for the script's own serialiser.
  await createScript(s, 'u/admin/deep_ts', 'bun', 'export function main() { let v: unknown = 1; for (let i = 0; i < 1000; i++) v = [v]; return v; }');
  await createScript(s, 'u/admin/deep_py', 'python3', 'def main():\n    v = 1\n    for _ in range(200):\n        v = [v]\n    return v\n');
  // Too deep for the script's own serialiser: the job fails in its process already.
  await createScript(s, 'u/admin/deeper_ts', 'bun', `export function main() { let v: unknown = 1; for (let i = 0; i < ${DEPTH}; i++) v = [v]; return v; }`);
  await createScript(s, 'u/admin/deeper_py', 'python3', `import sys\nsys.setrecursionlimit(${DEPTH * 4})\ndef main():\n    v = 1\n    for _ in range(${DEPTH}):\n        v = [v]\n    return v\n`);
  const deepExpr = '(() => { let v = 1; for (let i = 0; i < 100; i++) v = [v]; return v; })()';
  const flow = { path: 'u/admin/deep_expr', value: { modules: [{ id: 'a', value: { type: 'rawscript', language: 'bun', content: 'export function main(x: unknown) { return 1; }', input_transforms: { x: { type: 'javascript', expr: deepExpr } } } }] } };
  expect((await s.post(`${ws()}/flows/create`, flow)).status).toBe(201);
  await createScript(s, 'u/admin/shallow', 'bun', 'export function main() { let v: unknown = 1; for (let i = 0; i < 63; i++) v = [v]; return v; }');
});
afterAll(() => s?.stop());

async function run(path: string): Promise<{ job: Record<string, any>; sync: unknown }> {
  const res = await s.post(`${ws()}/jobs/run/p/${path}`, {});
  expect(res.status).toBe(201);
  const job = await waitForJob(s, await res.text(), 60_000);
  const sync = await s.post(`${ws()}/jobs/run_wait_result/p/${path}`, {});
  expect(sync.status).toBe(200);
  // The service still serves.
  expect((await s.fetch('/api/version')).status).toBe(200);
  return { job, sync: await sync.json() };
}

describe('a deeply nested result', () => {
  for (const path of ['u/admin/deep_bash', 'u/admin/deep_ts', 'u/admin/deep_py']) {
    it(`fails the job of ${path} with an error naming the limit`, async () => {
      const { job, sync } = await run(path);
      expect(job.status).toBe('failed');
      expect(job.result.error).toMatchObject({ name: 'ResultTooDeep', message: expect.stringMatching(/nests deeper than the limit of 64 levels/) });
      expect(sync).toEqual(job.result);
    }, 120_000);
  }

  for (const path of ['u/admin/deeper_ts', 'u/admin/deeper_py']) {
    it(`fails the job of ${path}, whose own process cannot serialise it`, async () => {
      const { job } = await run(path);
      expect(job.status).toBe('failed');
    }, 120_000);
  }

  it("fails a flow whose input transform computes a value nested beyond the limit", async () => {
    const res = await s.post(`${ws()}/jobs/run/f/u/admin/deep_expr`, {});
    expect(res.status).toBe(201);
    const job = await waitForJob(s, await res.text(), 60_000);
    expect(job.status).toBe('failed');
    expect(JSON.stringify(job.result)).toMatch(/nests deeper than the limit of 64 levels/);
  }, 120_000);

  it('keeps a result within the limit', async () => {
    const { job } = await run('u/admin/shallow');
    expect(job.status).toBe('success');
  });
});
