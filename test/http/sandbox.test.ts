import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';

let s: TestServer;
const ws = () => `/api/w/${s.workspace}`;
const run = async (path: string, body = '{}') =>
  (await s.fetch(`${ws()}/jobs/run_wait_result/p/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).json();

beforeAll(async () => {
  // The timeout leaves room for a cold first run on a loaded machine (process start, transpiling).
  s = await startServer({ env: { SVC_JOB_TIMEOUT_SECONDS: '5', SVC_MAX_OUTPUT_BYTES: '100000', SVC_SERVER_ONLY_SECRET: 'hunter2' } });
});
afterAll(() => s?.stop());

describe('running user code (issue point 6)', () => {
  it('runs TypeScript, Python and Bash with arguments by name', async () => {
    await createScript(s, 'u/admin/ts', 'deno', 'export async function main(a: number, b: number = 10) { return { sum: a + b }; }');
    await createScript(s, 'u/admin/py', 'python3', 'def main(name: str, times: int = 2):\n    return {"out": name * times}\n');
    await createScript(s, 'u/admin/sh', 'bash', 'name="$1"\ngreeting="${2:-hello}"\necho "working..."\necho "$greeting, $name"\n');
    expect(await run('u/admin/ts', '{"a":1}')).toEqual({ sum: 11 });
    expect(await run('u/admin/py', '{"name":"ab","times":3}')).toEqual({ out: 'ababab' });
    expect(await run('u/admin/sh', '{"name":"Ada"}')).toBe('hello, Ada');
  });

  it('gives the job only OV_TOKEN, OV_WORKSPACE, BASE_INTERNAL_URL and its id', async () => {
    await createScript(s, 'u/admin/env_ts', 'bun', 'export function main() { return process.env; }');
    await createScript(s, 'u/admin/env_py', 'python3', 'import os\ndef main():\n    return dict(os.environ)\n');
    // With the job network boundary the job reaches the API through its namespace's own loopback.
    const { confinement } = (await (await s.fetch('/api/runtime')).json()) as { confinement: { network?: string } | null };
    // The AWS shell's api runs no jobs and reports no confinement: its sandboxes here may run a job
    // behind the boundary (Node) or beside it (Python's handler), so either address is the API's.
    const apiUrls = !confinement ? [s.url, 'http://127.0.0.1:80'] : confinement.network === 'namespace' ? ['http://127.0.0.1:80'] : [s.url];
    for (const path of ['u/admin/env_ts', 'u/admin/env_py']) {
      const env = await run(path);
      expect(env.OV_WORKSPACE).toBe(s.workspace);
      expect(apiUrls).toContain(env.BASE_INTERNAL_URL);
      expect(env.WM_BASE_URL).toBe(env.BASE_INTERNAL_URL);
      expect(env.OV_TOKEN.split('.')).toHaveLength(3); // a signed JWT
      expect(env.OV_JOB_ID).toMatch(/^[0-9a-f-]{36}$/);
      expect(JSON.stringify(env)).not.toContain('hunter2');
      expect(env.SVC_ADMIN_TOKEN).toBeUndefined();
      expect(env.SVC_DATA_DIR).toBeUndefined();
    }
  });

  it('cannot read the service database', async () => {
    const db = join(s.dataDir, 'svc.db');
    await createScript(s, 'u/admin/peek', 'python3', `def main():\n    try:\n        open(${JSON.stringify(db)}, "rb").read(16)\n        return "read it"\n    except Exception as e:\n        return type(e).__name__\n`);
    expect(await run('u/admin/peek')).toMatch(/PermissionError|FileNotFoundError/);
    await createScript(s, 'u/admin/peek_sh', 'bash', `cat ${db} >/dev/null 2>&1 && echo "read it" || echo denied`);
    expect(await run('u/admin/peek_sh')).toBe('denied');
  });

  it('kills a job at its timeout, with its whole process group', async () => {
    // The job runs in its own PID namespace, where its pids mean nothing to the host: the child is
    // found by a command line no other process has.
    await createScript(s, 'u/admin/hang', 'bash', 't="30.$RANDOM$RANDOM"\nsleep "$t" &\necho "child $t"\nwait');
    const res = await run('u/admin/hang');
    expect(res.error.name).toBe('TimeoutError');
    const [job] = await (await s.fetch(`${ws()}/jobs/list?script_path_exact=u/admin/hang`)).json();
    const duration = job.logs.match(/child (\S+)/)[1];
    expect(await exitsSoon(() => !execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).includes(`sleep ${duration}`))).toBe(true);
  });

  it('stops a job that prints past the output cap', async () => {
    await createScript(s, 'u/admin/noisy', 'python3', 'def main():\n    while True:\n        print("x" * 1000)\n');
    const res = await run('u/admin/noisy');
    expect(res.error.name).toBe('OutputLimitExceeded');
  });

  it('reuses a warm process for the same version, never across workspaces', async () => {
    await s.post('/api/workspaces/create', { id: 'other', name: 'Other' });
    // uid and pid together name a process: each has a uid of its own and pids are per namespace.
    const content = 'export function main() { return `${process.getuid()}:${process.pid}`; }';
    await createScript(s, 'u/admin/pid', 'bun', content);
    const res = await s.post('/api/w/other/scripts/create', { path: 'u/admin/pid', language: 'bun', content });
    expect(res.status).toBe(201);
    const a = await run('u/admin/pid');
    const b = await run('u/admin/pid');
    const other = await (await s.fetch('/api/w/other/jobs/run_wait_result/p/u/admin/pid', { method: 'POST' })).json();
    expect(b).toBe(a);
    expect(other).not.toBe(a);
  });

  it('shows each job its own token even on a warm process', async () => {
    await createScript(s, 'u/admin/tok', 'bun', 'export function main() { return process.env.OV_JOB_ID; }');
    const ids = [];
    for (let i = 0; i < 2; i++) {
      const id = await (await s.fetch(`${ws()}/jobs/run/p/u/admin/tok`, { method: 'POST' })).text();
      const job = await waitForJob(s, id);
      expect(job.result).toBe(id);
      ids.push(id);
    }
    expect(ids[0]).not.toBe(ids[1]);
  });
});

/** Gone, or a zombie waiting for init to reap it: either way it no longer runs. */
async function exitsSoon(gone: () => boolean): Promise<boolean> {
  for (let i = 0; i < 40; i++) {
    if (gone()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}
