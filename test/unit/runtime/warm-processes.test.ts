import { afterAll, describe, expect, it } from 'vitest';
import type { CodeRunner, RunRequest } from '../../../functions/ports.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { errorOf, eventually, isKeyGone as isProcessGone, makeRunner, processKey, request, resultOf, runOnce, schemaOf } from './runtime-helpers.js';

const TS_PID = 'export async function main(ms = 0) { await new Promise((r) => setTimeout(r, ms)); return [process.pid, process.getuid()]; }';
const PY_PID = 'import os, time\ndef main(ms=0):\n    time.sleep(ms / 1000)\n    return [os.getpid(), os.getuid()]\n';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** Whether the object behind `ref` is gone after full collections (a WeakRef clears between tasks). */
async function isCollected(ref: WeakRef<object>): Promise<boolean> {
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setImmediate(r));
    collectGarbage();
  }
  await new Promise((r) => setImmediate(r));
  return ref.deref() === undefined;
}

/** Names the process that ran the job (see `processKey`: pids are per namespace). */
async function pidOf(runner: CodeRunner, req: RunRequest): Promise<number> {
  return processKey(resultOf((await runOnce(runner, req)).outcome) as [number, number]);
}

describe.each([
  ['nativets', TS_PID],
  ['python3', PY_PID],
] as const)('%s warm processes', (language, content) => {
  const { runner, dispose } = makeRunner({ maxWarmPerKey: 2 });
  afterAll(dispose);
  const req = (overrides: Partial<RunRequest> = {}) =>
    request(language, content, { scriptHash: 'h1', schema: schemaOf('ms'), ...overrides });

  it('reuse the process for the same workspace and hash only', async () => {
    const first = await pidOf(runner, req());
    expect(await pidOf(runner, req())).toBe(first);
    const otherWorkspace = await pidOf(runner, req({ workspaceId: 'other' }));
    const otherHash = await pidOf(runner, req({ scriptHash: 'h2' }));
    expect(new Set([first, otherWorkspace, otherHash]).size).toBe(3);
  });

  it('give each job its own env on the same process', async () => {
    const envScript =
      language === 'python3'
        ? 'import os\ndef main():\n    return [os.getuid() * 100000 + os.getpid(), dict(os.environ)]\n'
        : 'export function main() { return [process.getuid() * 100000 + process.pid, { ...process.env }]; }';
    const envReq = (env: Record<string, string>) => request(language, envScript, { scriptHash: 'env', env });
    const [pid1, env1] = resultOf((await runOnce(runner, envReq({ X: '1' }))).outcome) as [number, Record<string, string>];
    const [pid2, env2] = resultOf((await runOnce(runner, envReq({ Y: '2' }))).outcome) as [number, Record<string, string>];
    expect(pid2).toBe(pid1);
    expect(env1.X).toBe('1');
    expect(env2.Y).toBe('2');
    expect(env2).not.toHaveProperty('X');
  });

  it("give the next job none of a job's own changes to its env or directory", async () => {
    // What the next job sees, in its own code and in a process it starts (the C environment).
    const script =
      language === 'python3'
        ? 'import os, subprocess\ndef main(taint=False):\n    seen = dict(os.environ)\n    child = subprocess.run(["/bin/sh", "-c", \'echo "$X/$KEPT/$ADDED"\'], capture_output=True, text=True).stdout.strip()\n    cwd = os.getcwd()\n    if taint:\n        os.environ["ADDED"] = "by the job"\n        os.environ["X"] = "changed by the job"\n        del os.environ["KEPT"]\n        os.chdir("..")\n    return [os.getuid() * 100000 + os.getpid(), seen, child, cwd]\n'
        : 'import { execFileSync } from "node:child_process";\nexport function main(taint = false) { const seen = { ...process.env }; const child = execFileSync("/bin/sh", ["-c", \'echo "$X/$KEPT/$ADDED"\'], { encoding: "utf8" }).trim(); const cwd = process.cwd(); if (taint) { process.env.ADDED = "by the job"; process.env.X = "changed by the job"; delete process.env.KEPT; process.chdir(".."); process.env = { ONLY: "an object of the job" }; } return [process.getuid() * 100000 + process.pid, seen, child, cwd]; }';
    const envReq = (args: Record<string, unknown>) => request(language, script, { scriptHash: 'env-changes', schema: schemaOf('taint'), env: { X: '1', KEPT: 'k' }, args });
    const [pid1, , , cwd1] = resultOf((await runOnce(runner, envReq({ taint: true }))).outcome) as [number, Record<string, string>, string, string];
    const [pid2, env2, child2, cwd2] = resultOf((await runOnce(runner, envReq({}))).outcome) as [number, Record<string, string>, string, string];
    expect(pid2).toBe(pid1);
    expect(env2.X).toBe('1');
    expect(env2.KEPT).toBe('k');
    expect(env2).not.toHaveProperty('ADDED');
    expect(env2).not.toHaveProperty('ONLY');
    expect(child2).toBe('1/k/');
    expect(cwd2).toBe(cwd1);
  });

  it('give the next job a fresh, empty directory when the last one left files in its own', async () => {
    const script =
      language === 'python3'
        ? 'import os\ndef main(leave=False):\n    if leave:\n        open("left-behind.txt", "w").write("x")\n        return [os.getpid()]\n    return [os.getpid(), sorted(os.listdir("."))]\n'
        : 'import { readdirSync, writeFileSync } from "node:fs";\nexport function main(leave = false) { if (leave) { writeFileSync("left-behind.txt", "x"); return [process.pid]; } return [process.pid, readdirSync(".").sort()]; }';
    const leaveReq = (args: Record<string, unknown>) => request(language, script, { scriptHash: 'leaves-files', schema: schemaOf('leave'), args });
    // The first job does not ask for its directory: Node would remember it, which the shim must not rely on.
    const [pid1] = resultOf((await runOnce(runner, leaveReq({ leave: true }))).outcome) as [number];
    const [pid2, listing2] = resultOf((await runOnce(runner, leaveReq({}))).outcome) as [number, string[]];
    expect(pid2).toBe(pid1);
    expect(listing2).toEqual([]);
  });

  it('start at most maxWarmPerKey processes for concurrent jobs; the rest wait their turn', async () => {
    const runs = await Promise.all([1, 2, 3, 4].map(() => pidOf(runner, req({ scriptHash: 'busy', args: { ms: 300 } }))));
    expect(new Set(runs).size).toBe(2);
  });

  it('let a job waiting for a process be canceled while the busy one carries on', async () => {
    const busy = runOnce(runner, req({ scriptHash: 'queue', args: { ms: 600 } }));
    const alsoBusy = runOnce(runner, req({ scriptHash: 'queue', args: { ms: 600 } }));
    const controller = new AbortController();
    const waiting = runOnce(runner, req({ scriptHash: 'queue' }), controller.signal);
    setTimeout(() => controller.abort(), 100);
    expect(errorOf((await waiting).outcome).name).toBe('Canceled');
    expect((await busy).outcome.ok).toBe(true);
    expect((await alsoBusy).outcome.ok).toBe(true);
  });

  it('hold nothing of a finished job while the process serves the next ones', async () => {
    // A job's request (its env holds the job's token) was kept by a reaction each job added to the
    // process's exit promise: the service's memory grew with every job a warm process served.
    let job: RunRequest | undefined = req({ scriptHash: 'finished', env: { SVC_TOKEN_LIKE: 'x'.repeat(1000) } });
    const finished = new WeakRef(job);
    const pid = await pidOf(runner, job);
    job = undefined;
    for (let i = 0; i < 3; i++) expect(await pidOf(runner, req({ scriptHash: 'finished' }))).toBe(pid);
    expect(await isCollected(finished)).toBe(true);
  });

  it('never reuse a process that was stopped', async () => {
    const before = await pidOf(runner, req({ scriptHash: 'stopped' }));
    const timedOut = await runOnce(runner, req({ scriptHash: 'stopped', args: { ms: 5000 }, timeoutMs: 300 }));
    expect(errorOf(timedOut.outcome).name).toBe('TimeoutError');
    expect(await eventually(() => isProcessGone(before))).toBe(true);
    expect(await pidOf(runner, req({ scriptHash: 'stopped' }))).not.toBe(before);
  });
});

describe('warm process lifetime', () => {
  it('evicts idle processes after idleMs', async () => {
    const { runner, dispose } = makeRunner({ idleMs: 200 });
    try {
      const pid = await pidOf(runner, request('nativets', TS_PID));
      expect(await eventually(() => isProcessGone(pid))).toBe(true);
      expect(await pidOf(runner, request('nativets', TS_PID))).not.toBe(pid);
    } finally {
      await dispose();
    }
  });

  it('keeps at most maxWarmTotal processes, evicting the least recently used', async () => {
    const { runner, dispose } = makeRunner({ maxWarmTotal: 2 });
    try {
      const a = await pidOf(runner, request('nativets', TS_PID, { scriptHash: 'a' }));
      const b = await pidOf(runner, request('python3', PY_PID, { scriptHash: 'b' }));
      expect(await pidOf(runner, request('nativets', TS_PID, { scriptHash: 'a' }))).toBe(a);
      await pidOf(runner, request('nativets', TS_PID, { scriptHash: 'c' }));
      expect(await eventually(() => isProcessGone(b))).toBe(true);
      expect(isProcessGone(a)).toBe(false);
    } finally {
      await dispose();
    }
  });

  it('keeps no warm process whose measured memory is over the memory budget', async () => {
    // Every interpreter costs more than 1 MB (cgroup charge or RSS): none may stay.
    const { runner, dispose } = makeRunner({ warmMemoryBytes: 1024 * 1024 });
    try {
      const pid = await pidOf(runner, request('python3', PY_PID));
      expect(await eventually(() => isProcessGone(pid))).toBe(true);
      expect(await pidOf(runner, request('python3', PY_PID))).not.toBe(pid);
    } finally {
      await dispose();
    }
  });

  it('keeps the processes of 40 Python step versions warm by default (a flow of 40 steps)', async () => {
    const { runner, dispose } = makeRunner();
    try {
      const steps = Array.from({ length: 40 }, (_, i) => request('python3', `${PY_PID}# step ${i}\n`, { scriptHash: `step${i}` }));
      const first: number[] = [];
      for (const step of steps) first.push(await pidOf(runner, step));
      const second: number[] = [];
      for (const step of steps) second.push(await pidOf(runner, step));
      expect(second).toEqual(first);
    } finally {
      await dispose();
    }
  }, 120_000);

  it('close() kills every process, busy ones included', async () => {
    const { runner, dispose } = makeRunner();
    const idle = await pidOf(runner, request('python3', PY_PID));
    const busy = runner.run(
      request('nativets', TS_PID, { schema: schemaOf('ms'), args: { ms: 10_000 } }),
      { onLog: () => undefined, onStream: () => undefined },
      new AbortController().signal,
    );
    await new Promise((r) => setTimeout(r, 300));
    await dispose();
    expect(isProcessGone(idle)).toBe(true);
    expect((await busy).ok).toBe(false);
  });

  it('makes a warm trivial TypeScript run cost milliseconds (printed, not asserted)', async () => {
    const { runner, dispose } = makeRunner();
    try {
      const req = request('nativets', 'export function main(x: number) { return x + 1; }', { schema: schemaOf('x'), args: { x: 1 } });
      const coldStart = performance.now();
      await runOnce(runner, req);
      const cold = performance.now() - coldStart;
      const samples: number[] = [];
      for (let i = 0; i < 200; i++) {
        const start = performance.now();
        await runOnce(runner, req);
        samples.push(performance.now() - start);
      }
      samples.sort((x, y) => x - y);
      const at = (q: number) => samples[Math.floor(q * (samples.length - 1))].toFixed(2);
      console.log(`[runtime] TS first run ${cold.toFixed(1)} ms; warm runs: median ${at(0.5)} ms, p95 ${at(0.95)} ms`);
    } finally {
      await dispose();
    }
  });
});
