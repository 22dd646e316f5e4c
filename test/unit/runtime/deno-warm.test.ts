import { afterAll, describe, expect, it } from 'vitest';
import { errorOf, makeRunner, request, resultOf, runOnce } from './runtime-helpers.js';

/**
 * Deno jobs are served by warm processes (issue 31 item 3): the second job of a version is a
 * message to the process that ran the first, which kept its module state; other workspaces and
 * versions get processes of their own, and each job sees only its own environment.
 */
const COUNTER = 'let runs = 0;\nexport function main() { runs += 1; return { runs, pid: Deno.pid, env: Deno.env.toObject() }; }';
type Seen = { runs: number; pid: number; env: Record<string, string> };

describe('deno warm processes', () => {
  const { runner, dispose } = makeRunner();
  afterAll(dispose);
  const run = async (overrides: Parameters<typeof request>[2] = {}) =>
    resultOf((await runOnce(runner, request('deno', COUNTER, { scriptHash: 'deno-h1', ...overrides }))).outcome) as Seen;

  it('serve the next job of a version in the process that ran the first, each job with its own environment', async () => {
    const first = await run({ env: { ONLY_FIRST: '1' } });
    const second = await run({ env: { ONLY_SECOND: '2' } });
    expect(first.runs).toBe(1);
    expect(second).toMatchObject({ runs: 2, pid: first.pid });
    expect(first.env.ONLY_FIRST).toBe('1');
    expect(second.env.ONLY_SECOND).toBe('2');
    expect(second.env).not.toHaveProperty('ONLY_FIRST');
    expect(second.env).not.toHaveProperty('DENO_DIR');
  });

  it('never share a process across workspaces or versions', async () => {
    expect((await run({ workspaceId: 'other' })).runs).toBe(1);
    expect((await run({ scriptHash: 'deno-h2' })).runs).toBe(1);
  });

  it('stop a job at its timeout or its output limit, and serve the next job from a fresh process', async () => {
    const stuck = 'let runs = 0;\nexport async function main(hang = true) { runs += 1; if (hang) await new Promise(() => {}); return runs; }';
    const schema = { type: 'object' as const, properties: { hang: { type: 'boolean' } }, required: [] };
    const timedOut = await runOnce(runner, request('deno', stuck, { scriptHash: 'deno-stuck', schema, timeoutMs: 1500 }));
    expect(errorOf(timedOut.outcome)).toEqual({ name: 'TimeoutError', message: 'job exceeded its timeout of 1.5s' });
    expect(resultOf((await runOnce(runner, request('deno', stuck, { scriptHash: 'deno-stuck', schema, args: { hang: false } }))).outcome)).toBe(1);

    const loud = 'export function main() { for (let i = 0; i < 1000; i++) console.log("x".repeat(100)); return 1; }';
    expect(errorOf((await runOnce(runner, request('deno', loud, { maxOutputBytes: 10_000 }))).outcome).name).toBe('OutputLimitExceeded');
  });

  it('fail a job whose script exits the process, and run the next one in a fresh process', async () => {
    const exits = 'let runs = 0;\nexport function main(exit = true) { runs += 1; if (exit) Deno.exit(3); return runs; }';
    const schema = { type: 'object' as const, properties: { exit: { type: 'boolean' } }, required: [] };
    const exited = await runOnce(runner, request('deno', exits, { scriptHash: 'deno-exit', schema }));
    expect(errorOf(exited.outcome)).toMatchObject({ name: 'ExecutionErr', message: expect.stringContaining('exited with code 3') });
    expect(resultOf((await runOnce(runner, request('deno', exits, { scriptHash: 'deno-exit', schema, args: { exit: false } }))).outcome)).toBe(1);
  });
});
