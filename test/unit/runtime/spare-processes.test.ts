import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { CodeRunner, RunRequest } from '../../../functions/ports.js';
import type { LocalRunner } from '../../../functions/runtime/index.js';
import { eventually, isKeyGone, isRoot, makeRunner, processKey, request, resultOf, runOnce } from './runtime-helpers.js';

const TS_WHO = 'export function main() { return [process.pid, process.getuid()]; }';
const PY_WHO = 'import os\ndef main():\n    return [os.getpid(), os.getuid()]\n';

/** Names the process that ran the job, as `processKey` does. */
async function keyOf(runner: CodeRunner, req: RunRequest): Promise<number> {
  return processKey(resultOf((await runOnce(runner, req)).outcome) as [number, number]);
}

/** The same name for a warm process seen from the host: its uid as root, else its pid. */
function hostKey(pid: number): number {
  if (!isRoot) return pid;
  return Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
}

/** True once the process runs as its own uid (false while it is still nsenter, or gone). */
function switched(pid: number): boolean {
  try {
    return hostKey(pid) !== 0;
  } catch {
    return false;
  }
}

/**
 * Waits until the runner holds `count` more warm processes than `before`, and names the new ones.
 * A process just spawned may still be nsenter joining its network namespace as root, before it
 * switches to its uid: it is named once it has.
 */
async function newWarmKeys(runner: LocalRunner, before: number[], count: number): Promise<number[]> {
  const fresh = () => runner.warmProcessGroups().filter((p) => !before.includes(p));
  expect(await eventually(() => fresh().length >= count && fresh().every((pid) => !isRoot || switched(pid)), 10_000)).toBe(true);
  return fresh().map(hostKey);
}

describe.each([
  ['nativets', TS_WHO],
  ['python3', PY_WHO],
] as const)('%s spare processes', (language, content) => {
  const made = makeRunner({ sparesPerKey: 1 });
  const runner = made.runner as LocalRunner;
  afterAll(made.dispose);
  const req = (overrides: Partial<RunRequest> = {}) => request(language, content, { env: { OV_USERNAME: 'alice' }, ...overrides });

  it('give a new script version a process started before its job, one that never held code', async () => {
    const before = runner.warmProcessGroups();
    const first = await keyOf(runner, req({ scriptHash: 'v1' }));
    // The first job's own process plus the spare started after it was handed out.
    const spares = (await newWarmKeys(runner, before, 2)).filter((key) => key !== first);
    expect(spares).toHaveLength(1);
    expect(await keyOf(runner, req({ scriptHash: 'v2' }))).toBe(spares[0]);
    // v1 keeps its own process: a process that held one version never serves another.
    expect(await keyOf(runner, req({ scriptHash: 'v1' }))).toBe(first);
  });

  it('never hand one identity a spare started for another', async () => {
    const before = runner.warmProcessGroups();
    await keyOf(runner, req({ scriptHash: 'alice-only' }));
    const alices = await newWarmKeys(runner, before, 1);
    const bobs = await keyOf(runner, req({ scriptHash: 'bob', env: { OV_USERNAME: 'bob' } }));
    const otherWorkspace = await keyOf(runner, req({ scriptHash: 'elsewhere', workspaceId: 'other' }));
    const otherLimits = await keyOf(runner, req({ scriptHash: 'limited', limits: { processes: 50 } }));
    for (const key of [bobs, otherWorkspace, otherLimits]) expect(alices).not.toContain(key);
  });
});

describe('module state across script versions', () => {
  const { runner, dispose } = makeRunner({ sparesPerKey: 1 });
  afterAll(dispose);

  it.each([
    ['nativets', 'export function main() { (globalThis as any).leak = "A"; return 1; }', 'export function main() { return (globalThis as any).leak ?? null; }'],
    ['python3', 'import builtins\ndef main():\n    builtins.leak = "A"\n    return 1\n', 'import builtins\ndef main():\n    return getattr(builtins, "leak", None)\n'],
  ] as const)('%s: what script A leaves in its process never reaches script B of the same user', async (language, a, b) => {
    for (let i = 0; i < 3; i++) {
      expect(resultOf((await runOnce(runner, request(language, a, { scriptHash: `${language}-a${i}` }))).outcome)).toBe(1);
      expect(resultOf((await runOnce(runner, request(language, b, { scriptHash: `${language}-b${i}` }))).outcome)).toBeNull();
    }
  });
});

describe('spare lifetime', () => {
  it('close() kills the spares too', async () => {
    const made = makeRunner({ sparesPerKey: 2 });
    const runner = made.runner as LocalRunner;
    await keyOf(runner, request('python3', PY_WHO));
    const keys = await newWarmKeys(runner, [], 3);
    await made.dispose();
    for (const key of keys) expect(await eventually(() => isKeyGone(key))).toBe(true);
  });

  it('keeps at most maxSpares overall: the spare of a new identity replaces the oldest of another', async () => {
    const made = makeRunner({ sparesPerKey: 1, maxSpares: 1 });
    const runner = made.runner as LocalRunner;
    try {
      const alice = await keyOf(runner, request('python3', PY_WHO, { env: { OV_USERNAME: 'alice' } }));
      const alicesSpare = (await newWarmKeys(runner, [], 2)).filter((key) => key !== alice);
      expect(alicesSpare).toHaveLength(1);
      await keyOf(runner, request('python3', PY_WHO, { env: { OV_USERNAME: 'bob' } }));
      expect(await eventually(() => isKeyGone(alicesSpare[0]!), 10_000)).toBe(true);
      expect(isKeyGone(alice)).toBe(false);
    } finally {
      await made.dispose();
    }
  });

  it('an unused spare goes after idleMs', async () => {
    // Long enough that the job's process and its spare are both seen before either goes, even on
    // a loaded machine where the spare takes a second to start.
    const made = makeRunner({ sparesPerKey: 1, idleMs: 2_000 });
    const runner = made.runner as LocalRunner;
    try {
      await keyOf(runner, request('python3', PY_WHO));
      const keys = await newWarmKeys(runner, [], 2);
      for (const key of keys) expect(await eventually(() => isKeyGone(key), 15_000)).toBe(true);
    } finally {
      await made.dispose();
    }
  });
});

describe('bash spare processes', () => {
  const made = makeRunner({ sparesPerKey: 1 });
  const runner = made.runner as LocalRunner;
  afterAll(made.dispose);
  // Its pid, uid and job directory (HOME): which process, which jail, which spare served the job.
  const WHO = 'echo "[$$, $(id -u), \\"$HOME\\"]"';
  const run = async () => resultOf((await runOnce(runner, request('bash', WHO, { env: { OV_USERNAME: 'alice' } }))).outcome) as [number, number, string];

  it('serve a bash job with a confined process started before the job, and each spare one job only', async () => {
    const before = runner.warmProcessGroups();
    const first = await run();
    // Taken by the first job, the spare for its identity was started again: wait until it runs as its uid.
    const ready = await newWarmKeys(runner, before, 1);
    expect(ready).toHaveLength(1);
    const second = await run();
    expect(processKey([second[0], second[1]])).toBe(ready[0]);
    const third = await run();
    // A spare is released with its job: the next job gets another jail and another directory.
    expect(new Set([first[2], second[2], third[2]]).size).toBe(3);
    expect(processKey([third[0], third[1]])).not.toBe(processKey([second[0], second[1]]));
  });
});
