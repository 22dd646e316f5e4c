import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';

const servers: TestServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
  dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
});

async function start(dataDir: string, env: Record<string, string> = {}) {
  const s = await startServer({ dataDir, token: 'durable-admin', env });
  servers.push(s);
  return s;
}

// These three restart the local process on its data directory. The AWS shell has no such process
// to restart: its state lives in DynamoDB and SQS (emulated in memory here, so gone with the
// server), and its admin token always comes from Secrets Manager, never printed.
const localProcessOnly = process.env.SVC_TEST_SHELL === 'aws';

/** The folder a local service keeps its warm processes' and jobs' files in (functions/runtime/run-folder.ts). */
function runFolderOf(s: TestServer): string {
  const found = readdirSync(tmpdir()).find((name) => name.startsWith(`svc-run-${s.process.pid}-`));
  if (!found) throw new Error(`no run folder of the service with pid ${s.process.pid} in ${tmpdir()}`);
  return join(tmpdir(), found);
}

describe('nothing accepted is lost (issue point 8)', () => {
  it.skipIf(localProcessOnly)('re-runs a job interrupted by kill -9 on the next start', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-durable-'));
    dirs.push(dataDir);
    const first = await start(dataDir);
    await createScript(first, 'u/admin/slow', 'python3', 'import time\ndef main(n: int):\n    time.sleep(1.5)\n    return n + 1\n');
    const id = await (await first.fetch(`/api/w/main/jobs/run/p/u/admin/slow`, { method: 'POST', body: '{"n":1}' })).text();
    for (let i = 0; i < 100; i++) {
      if ((await (await first.fetch(`/api/w/main/jobs_u/get/${id}`)).json()).status === 'running') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const killedRunFolder = runFolderOf(first);
    await first.kill9();
    servers.splice(servers.indexOf(first), 1);
    // The killed service could not remove its run folder.
    expect(existsSync(killedRunFolder)).toBe(true);

    const second = await start(dataDir);
    const job = await waitForJob(second, id);
    expect(job).toMatchObject({ status: 'success', result: 2, attempts: 2 });
    // The next service to start removed them; its own folder is there.
    expect(existsSync(killedRunFolder)).toBe(false);
    expect(existsSync(runFolderOf(second))).toBe(true);
  });

  it.skipIf(localProcessOnly)('tells a job re-run after kill -9 that it is a re-run, and never re-runs a finished one', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-durable-'));
    dirs.push(dataDir);
    const first = await start(dataDir);
    await createScript(first, 'u/admin/attempt', 'python3', 'import os, time\ndef main(wait: float):\n    time.sleep(wait)\n    return int(os.environ["OV_JOB_ATTEMPT"])\n');
    const run = async (s: TestServer, wait: number) => (await s.fetch('/api/w/main/jobs/run/p/u/admin/attempt', { method: 'POST', body: JSON.stringify({ wait }) })).text();
    const done = await run(first, 0);
    expect(await waitForJob(first, done)).toMatchObject({ status: 'success', result: 1, attempts: 1 });
    const interrupted = await run(first, 1.5);
    for (let i = 0; i < 100; i++) {
      if ((await (await first.fetch(`/api/w/main/jobs_u/get/${interrupted}`)).json()).status === 'running') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await first.kill9();
    servers.splice(servers.indexOf(first), 1);

    const second = await start(dataDir);
    expect(await waitForJob(second, interrupted)).toMatchObject({ status: 'success', result: 2, attempts: 2 });
    // The job finished before the crash kept its one run and its result.
    expect(await (await second.fetch(`/api/w/main/jobs_u/get/${done}`)).json()).toMatchObject({ status: 'success', result: 1, attempts: 1 });
  });

  it.skipIf(localProcessOnly)('keeps every accepted job when the workers cannot keep up, and runs them after a crash', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-durable-'));
    dirs.push(dataDir);
    const first = await start(dataDir, { SVC_WORKERS: '1' });
    await createScript(first, 'u/admin/echo', 'bash', 'x="$1"\nsleep 0.3\necho "$x"');
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await first.fetch(`/api/w/main/jobs/run/p/u/admin/echo`, { method: 'POST', body: JSON.stringify({ x: `n${i}` }) });
      expect(res.status).toBe(201);
      ids.push(await res.text());
    }
    await first.kill9();
    servers.splice(servers.indexOf(first), 1);

    const second = await start(dataDir, { SVC_WORKERS: '4' });
    for (const [i, id] of ids.entries()) {
      expect(await waitForJob(second, id)).toMatchObject({ status: 'success', result: `n${i}` });
    }
  });

  it.skipIf(localProcessOnly)('loses no acknowledged run when killed -9 in the middle of sixteen clients', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-durable-'));
    dirs.push(dataDir);
    const first = await start(dataDir);
    await createScript(first, 'u/admin/echo', 'bun', 'export function main(n: number) { return n; }');
    // What the clients were told: a sync run's result, an async run's id.
    const answered = new Map<number, unknown>();
    const accepted = new Map<number, string>();
    let next = 0;
    let killed = false;
    const client = async () => {
      while (!killed) {
        const n = next++;
        const sync = n % 2 === 0;
        try {
          const res = await first.fetch(`/api/w/main/jobs/${sync ? 'run_wait_result' : 'run'}/p/u/admin/echo`, { method: 'POST', body: JSON.stringify({ n }) });
          const text = await res.text();
          if (sync && res.status === 200) answered.set(n, JSON.parse(text));
          if (!sync && res.status === 201) accepted.set(n, text);
        } catch {
          // A request the kill cut off was never acknowledged.
        }
      }
    };
    const clients = Array.from({ length: 16 }, client);
    while (answered.size + accepted.size < 300) await new Promise((r) => setTimeout(r, 5));
    killed = true;
    await first.kill9();
    servers.splice(servers.indexOf(first), 1);
    await Promise.all(clients);
    const acknowledged = { answered: new Map(answered), accepted: new Map(accepted) };

    const second = await start(dataDir);
    const stored = await (await second.fetch('/api/w/main/jobs/list?script_path_exact=u/admin/echo&status=success&per_page=1000')).json();
    const succeeded = new Map<number, unknown>(stored.map((j: { args: { n: number }; result: unknown }) => [j.args.n, j.result]));
    for (const [n, result] of acknowledged.answered) {
      expect(result).toBe(n);
      expect(succeeded.get(n), `sync run ${n}, answered before the kill`).toBe(n);
    }
    for (const [n, id] of acknowledged.accepted) expect(await waitForJob(second, id), `async run ${n}, accepted before the kill`).toMatchObject({ status: 'success', result: n });
  });

  it.skipIf(localProcessOnly)('prints a new admin token once on the first start, none later', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-boot-'));
    dirs.push(dataDir);
    const first = await startServer({ dataDir, env: { SVC_ADMIN_TOKEN: '' } });
    const token = first.output().match(/admin token \(shown once, keep it\): (\S+)/)?.[1];
    expect(token).toBeTruthy();
    expect((await first.fetch('/api/w/main/scripts/list', { token })).status).toBe(200);
    // It says where the console is, and the token signs in there (issue 36).
    expect(first.output()).toContain(`open the console: ${first.url}/login`);
    const signIn = await first.fetch('/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }), token: null });
    expect(signIn.status).toBe(200);
    await first.stop();
    const second = await startServer({ dataDir, env: { SVC_ADMIN_TOKEN: '' } });
    servers.push(second);
    expect(second.output()).not.toMatch(/admin token/);
    expect((await second.fetch('/api/w/main/scripts/list', { token })).status).toBe(200);
  });

  it.skipIf(localProcessOnly)('says on a first start with a chosen admin token what it created and where to sign in, never the token', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-boot-'));
    dirs.push(dataDir);
    const token = `chosen-${Math.random().toString(36).slice(2)}-admin-token`;
    const first = await startServer({ dataDir, token, env: { SVC_DEFAULT_WORKSPACE: 'ops' } });
    expect(first.output()).toContain('created workspace "ops" and user "admin"');
    expect(first.output()).toContain(`open the console: ${first.url}/login and sign in with the admin token`);
    expect(first.output()).not.toContain(token);
    expect(first.output()).not.toMatch(/shown once/);
    await first.stop();
    // A later start created nothing, and says nothing of it.
    const second = await startServer({ dataDir, token, env: { SVC_DEFAULT_WORKSPACE: 'ops' } });
    servers.push(second);
    expect(second.output()).not.toMatch(/created workspace|open the console/);
    expect((await second.fetch('/api/w/ops/scripts/list')).status).toBe(200);
  });

  it.skipIf(localProcessOnly)('keeps a suspended flow through kill -9: it resumes after a restart, and its timeout still fires', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-durable-'));
    dirs.push(dataDir);
    const first = await start(dataDir);
    const ask = `import * as svc from 'svc-client';\nexport async function main() { return await svc.getResumeUrls('ops') }`;
    const flow = (timeout: number) => ({
      modules: [
        { id: 'ask', value: { type: 'rawscript', language: 'bun', content: ask, input_transforms: {} }, suspend: { required_events: 1, timeout } },
        { id: 'after', value: { type: 'rawscript', language: 'bun', content: 'export function main(a: string[]) { return a }', input_transforms: { a: { type: 'javascript', expr: 'approvers' } } } },
      ],
    });
    expect((await first.post('/api/w/main/flows/create', { path: 'u/admin/patient', value: flow(600) })).status).toBe(201);
    expect((await first.post('/api/w/main/flows/create', { path: 'u/admin/impatient', value: flow(3) })).status).toBe(201);
    const suspended = async (s: TestServer, id: string) => {
      for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
        const job = await (await s.fetch(`/api/w/main/jobs_u/get/${id}`)).json();
        if (job.status === 'suspended') return job;
      }
      throw new Error(`flow ${id} did not suspend`);
    };
    const patient = await (await first.fetch('/api/w/main/jobs/run/p/u/admin/patient', { method: 'POST', body: '{}' })).text();
    const impatient = await (await first.fetch('/api/w/main/jobs/run/p/u/admin/impatient', { method: 'POST', body: '{}' })).text();
    const resume = (await suspended(first, patient)).flow_status.results.ask.resume as string;
    await suspended(first, impatient);
    await first.kill9();
    servers.splice(servers.indexOf(first), 1);

    const second = await start(dataDir);
    expect((await second.fetch(resume.replace(/^https?:\/\/[^/]+/, ''), { method: 'POST', token: null })).status).toBe(200);
    expect(await waitForJob(second, patient)).toMatchObject({ status: 'success', result: ['ops'] });
    expect((await waitForJob(second, impatient)).result.error).toMatchObject({ name: 'SuspendTimeout' });
  });
});
