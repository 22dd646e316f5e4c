import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLambdaSandboxRunner } from '../../functions/adapters/aws/lambda-sandbox-runner.js';
import { inProcessInvoke } from '../../functions/adapters/aws/sandbox-in-process.js';
import type { SandboxEvent } from '../../functions/adapters/aws/sandbox-protocol.js';
import { closeSandbox, handler, runSandboxed, setSandboxWorkDir } from '../../functions/handlers/sandbox.js';
import type { RunRequest } from '../../functions/ports.js';
import { eventually, isProcessGone, processStartedAt, recorder, request, resultOf, runOnce, schemaOf } from '../unit/runtime/runtime-helpers.js';

const sandboxDir = mkdtempSync(join(tmpdir(), 'svc-sandbox-test-'));
setSandboxWorkDir(sandboxDir);
const invoke = inProcessInvoke();
const sandbox = createLambdaSandboxRunner(invoke);

afterAll(async () => {
  await closeSandbox();
  rmSync(sandboxDir, { recursive: true, force: true });
});

async function eventsOf(payload: unknown, remainingMs?: number): Promise<SandboxEvent[]> {
  const events: SandboxEvent[] = [];
  await runSandboxed(payload, (event) => events.push(event), new AbortController().signal, remainingMs);
  return events;
}

async function pythonEventsOf(payload: unknown): Promise<SandboxEvent[]> {
  const events: SandboxEvent[] = [];
  // The Python handler is reached with python3 requests only; garbage has to pretend to be one.
  for await (const event of invoke({ language: 'python3', ...(payload as object) } as RunRequest, new AbortController().signal)) {
    events.push(event);
  }
  return events;
}

const valid = request('nativets', 'export function main() { return 1; }');

describe('payload checks', () => {
  it.each([
    ['null', null],
    ['a string', 'run this'],
    ['an empty object', {}],
    ['a negative timeout', { ...valid, timeoutMs: -1 }],
    ['an unknown language', { ...valid, language: 'cobol' }],
    ['env values that are not strings', { ...valid, env: { A: 1 } }],
  ])('the Node sandbox answers %s with exactly one SandboxError outcome', async (_what, payload) => {
    const events = await eventsOf(payload);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'outcome', outcome: { ok: false, error: { name: 'SandboxError' } } });
  });

  it('the Node sandbox refuses python3 jobs: they belong to the Python sandbox', async () => {
    const [event] = await eventsOf({ ...valid, language: 'python3' });
    expect(event).toMatchObject({ outcome: { error: { name: 'SandboxError', message: expect.stringContaining('python3') } } });
  });

  it.each([
    ['an empty object', {}],
    ['a missing schema', { ...request('python3', 'def main():\n    return 1\n'), schema: undefined }],
    ['args that are a list', { ...request('python3', 'def main():\n    return 1\n'), args: [1] }],
    ['a timeout of true', { ...request('python3', 'def main():\n    return 1\n'), timeoutMs: true }],
  ])('the Python sandbox answers %s with exactly one SandboxError outcome', async (_what, payload) => {
    const events = await pythonEventsOf(payload);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'outcome', outcome: { ok: false, error: { name: 'SandboxError' } } });
  });
});

describe('environment', () => {
  const ENV = { OV_TOKEN: 'tok', OV_WORKSPACE: 'ws' };
  const BASE_ENV_KEYS = ['HOME', 'LANG', 'PATH'];
  beforeAll(() => {
    // The sandbox Lambda's environment holds its role's credentials: none of it may reach a job.
    process.env.SVC_SECRET_TEST = 'secret';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'not-for-user-code';
  });
  afterAll(() => {
    delete process.env.SVC_SECRET_TEST;
  });

  it.each([
    ['nativets', 'export function main() { return process.env; }'],
    ['python3', 'import os\ndef main():\n    return dict(os.environ)\n'],
  ] as const)('%s sees exactly the job env and nothing of the handler', async (language, content) => {
    const env = resultOf((await runOnce(sandbox, request(language, content, { env: ENV }))).outcome) as Record<string, string>;
    // Behind the job network boundary (Node), also the proxy variables that lead out through it.
    const proxy = ['HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy'];
    expect(Object.keys(env).filter((k) => !proxy.includes(k)).sort()).toEqual([...BASE_ENV_KEYS, ...Object.keys(ENV)].sort());
    expect(env).toMatchObject(ENV);
    expect(JSON.stringify(env)).not.toContain('not-for-user-code');
  });

  it('bash sees the job env and nothing of the handler', async () => {
    const { log } = await runOnce(sandbox, request('bash', 'env\n', { env: ENV }));
    expect(log).toContain('OV_TOKEN=tok');
    expect(log).not.toContain('SVC_SECRET_TEST');
    expect(log).not.toContain('AWS_SECRET_ACCESS_KEY');
  });
});

describe('the Node sandbox', () => {
  it('keeps its runner across invocations, so a script version stays warm', async () => {
    const content = 'let runs = 0;\nexport function main() { runs += 1; return { pid: process.pid, runs }; }';
    const first = resultOf((await runOnce(sandbox, request('nativets', content))).outcome) as { pid: number; runs: number };
    const second = resultOf((await runOnce(sandbox, request('nativets', content))).outcome) as { pid: number; runs: number };
    expect(second).toEqual({ pid: first.pid, runs: first.runs + 1 });
  });

  it('relays stream chunks while the job still runs', async () => {
    // The pause between the chunks is what the test tells apart (relayed at once, not at the end):
    // long enough that the poll sees the first chunk before the job ends, on a loaded machine too.
    const content = 'export async function* main() { yield "first"; await new Promise((r) => setTimeout(r, 2000)); yield "second"; }';
    const rec = recorder();
    let settled = false;
    const running = sandbox.run(request('nativets', content), rec.hooks, new AbortController().signal);
    void running.then(() => (settled = true));
    await expect.poll(() => rec.chunks.length).toBe(1);
    expect(settled).toBe(false);
    expect(await running).toEqual({ ok: true, result: 'firstsecond', streamed: true });
    expect(rec.chunks).toEqual(['first', 'second']);
  });

  it('cuts the job timeout to the time Lambda has left, so the outcome still gets out', async () => {
    const slow = request('nativets', 'export async function main() { await new Promise(() => {}); }', { timeoutMs: 60_000 });
    const started = Date.now();
    const events = await eventsOf(slow, 300);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(events.at(-1)).toMatchObject({ type: 'outcome', outcome: { ok: false, error: { name: 'TimeoutError' } } });
  });

  it('writes NDJSON on the response stream: logs and chunks as they happen, then one outcome', async () => {
    const content = 'export async function* main() { console.log("starting"); yield "a"; yield { b: 1 }; }';
    const written: Buffer[] = [];
    const responseStream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        written.push(chunk);
        done();
      },
    });
    const context = { getRemainingTimeInMillis: () => 60_000 } as Context;
    await handler(request('nativets', content), responseStream as never, context);
    expect(responseStream.writableEnded).toBe(true);
    const events = Buffer.concat(written).toString('utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as SandboxEvent);
    expect(events).toEqual([
      { type: 'log', text: 'starting\n' },
      { type: 'stream', chunk: 'a' },
      { type: 'stream', chunk: '{"b":1}' },
      { type: 'outcome', outcome: { ok: true, result: 'a{"b":1}', streamed: true } },
    ]);
  });
});

describe('the Python sandbox', () => {
  it('runs the job in a fresh directory that is gone afterwards', async () => {
    const content = 'import os\ndef main():\n    open("f.txt", "w").write("x")\n    return [os.getcwd(), os.environ["HOME"]]\n';
    const [cwd, home] = resultOf((await runOnce(sandbox, request('python3', content))).outcome) as string[];
    expect(home).toBe(cwd);
    expect(existsSync(cwd)).toBe(false);
  });

  it('kills what the job left running in its process group', async () => {
    const content =
      'import subprocess\ndef main():\n    child = subprocess.Popen(["sleep", "60"])\n    print(f"grandchild {child.pid}")\n    return child.pid\n';
    const pid = resultOf((await runOnce(sandbox, request('python3', content))).outcome) as number;
    expect(await eventually(() => isProcessGone(pid))).toBe(true);
  });

  it('stops listening at once on cancel, and the handler takes its job down with it', async () => {
    // The job runs as nobody when the tests run as root: it needs a directory it may write to.
    const drop = mkdtempSync(join(tmpdir(), 'svc-sandbox-drop-'));
    chmodSync(drop, 0o777);
    const pidFile = join(drop, 'pid');
    const content = 'import os, time\ndef main(pid_file):\n    open(pid_file, "w").write(str(os.getpid()))\n    time.sleep(60)\n';
    const req = request('python3', content, { timeoutMs: 60_000, schema: schemaOf('pid_file'), args: { pid_file: pidFile } });
    const abort = new AbortController();
    const running = sandbox.run(req, { onLog: () => undefined, onStream: () => undefined }, abort.signal);
    try {
      expect(await eventually(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '', 5_000)).toBe(true);
      const pid = Number(readFileSync(pidFile, 'utf8'));
      const startedAt = processStartedAt(pid);
      abort.abort();
      expect(await running).toEqual({ ok: false, error: { name: 'Canceled', message: 'job was canceled' } });
      // The handler gets SIGTERM and kills the job's group on its way out: a Python start and exit,
      // which on a loaded CI machine took longer than the helper's default 3 s once.
      expect(await eventually(() => isProcessGone(pid, startedAt), 15_000)).toBe(true);
    } finally {
      rmSync(drop, { recursive: true, force: true });
    }
  });

});
