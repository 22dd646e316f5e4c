import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GoCompiler, goBinaryPath } from '../../../functions/runtime/go-build.js';
import { errorOf, makeRunner, request, resultOf, runOnce, schemaOf } from './runtime-helpers.js';

/**
 * Go jobs are served by warm processes of their version's binary (issue 35 item 2): the second
 * job is a message to the process that ran the first, which kept its package state; each job sees
 * only its own environment and directory; a job stopped, crashed or panicking leaves the next one
 * a fresh process; other workspaces and run-as users get processes of their own.
 */
const COUNTER = `package inner

import (
	"fmt"
	"os"
	"strings"
	"time"
)

var runs int

func main(mode string) (map[string]any, error) {
	runs++
	switch mode {
	case "exit":
		os.Exit(3)
	case "panic":
		panic("boom")
	case "hang":
		time.Sleep(time.Hour)
	case "loud":
		for i := 0; i < 1000; i++ {
			fmt.Println(strings.Repeat("x", 100))
		}
	}
	fmt.Println("run", runs)
	env := map[string]string{}
	for _, pair := range os.Environ() {
		name, value, _ := strings.Cut(pair, "=")
		env[name] = value
	}
	cwd, _ := os.Getwd()
	return map[string]any{"runs": runs, "env": env, "cwd": cwd}, nil
}
`;
type Seen = { runs: number; env: Record<string, string>; cwd: string };

const cacheDir = mkdtempSync(join(tmpdir(), 'svc-go-builds-'));
const { runner, dispose } = makeRunner({ goCacheDir: cacheDir });
afterAll(async () => {
  await dispose();
  rmSync(cacheDir, { recursive: true, force: true });
});
beforeAll(async () => {
  expect(await new GoCompiler({ cacheDir }).compile('go', COUNTER)).toEqual({ ok: true });
}, 240_000);

const job = (mode = '', overrides: Parameters<typeof request>[2] = {}) =>
  runOnce(runner, request('go', COUNTER, { schema: schemaOf('mode'), args: { mode }, ...overrides }));
const seen = async (mode = '', overrides: Parameters<typeof request>[2] = {}) => resultOf((await job(mode, overrides)).outcome) as Seen;

describe('Go warm processes', () => {
  it('serve the next job of a version in the process that ran the first, each job with its own environment and directory', async () => {
    const first = await job('', { env: { ONLY_FIRST: '1' } });
    const second = await seen('', { env: { ONLY_SECOND: '2' } });
    expect(first.log).toContain('run 1\n');
    const firstSeen = resultOf(first.outcome) as Seen;
    expect(firstSeen.runs).toBe(1);
    expect(second.runs).toBe(2);
    expect(firstSeen.env.ONLY_FIRST).toBe('1');
    expect(second.env.ONLY_SECOND).toBe('2');
    expect(second.env).not.toHaveProperty('ONLY_FIRST');
    expect(second.env.HOME).toBe(second.cwd);
  });

  it('never share a process across workspaces or run-as users', async () => {
    expect((await seen('', { workspaceId: 'other' })).runs).toBe(1);
    expect((await seen('', { env: { OV_USERNAME: 'someone-else' } })).runs).toBe(1);
  });

  it('stop a job at its timeout or its output limit, and serve the next job from a fresh process', async () => {
    const timedOut = await job('hang', { workspaceId: 'stops', timeoutMs: 1500 });
    expect(errorOf(timedOut.outcome)).toEqual({ name: 'TimeoutError', message: 'job exceeded its timeout of 1.5s' });
    expect((await seen('', { workspaceId: 'stops' })).runs).toBe(1);
    expect(errorOf((await job('loud', { workspaceId: 'stops', maxOutputBytes: 10_000 })).outcome).name).toBe('OutputLimitExceeded');
    expect((await seen('', { workspaceId: 'stops' })).runs).toBe(1);
  });

  it('fail a job whose program exits or panics, and run the next one in a fresh process', async () => {
    expect(errorOf((await job('exit', { workspaceId: 'crashes' })).outcome)).toMatchObject({ name: 'ExecutionErr', message: expect.stringContaining('exited with code 3') });
    expect((await seen('', { workspaceId: 'crashes' })).runs).toBe(1);
    expect(errorOf((await job('panic', { workspaceId: 'crashes' })).outcome)).toMatchObject({ name: 'panic', message: 'boom' });
    expect((await seen('', { workspaceId: 'crashes' })).runs).toBe(1);
  });

  it('fail a job whose program cannot start, with what it printed', async () => {
    const content = 'package inner\n\nimport "fmt"\n\nfunc init() {\n\tfmt.Println("starting up")\n\tpanic("no config")\n}\n\nfunc main() (int, error) {\n\treturn 1, nil\n}\n';
    expect(await new GoCompiler({ cacheDir }).compile('go', content)).toEqual({ ok: true });
    const error = errorOf((await runOnce(runner, request('go', content))).outcome);
    expect(error.name).toBe('ExecutionErr');
    expect(error.message).toMatch(/^the Go program exited with code 2 before it was ready for its job:\nstarting up\npanic: no config/);
  }, 240_000);

  it('run a binary built before the serve loop as one process per job, until the version is created again', async () => {
    // A stand-in for an older build: it answers one job on fd 3 and knows nothing of the loop.
    const content = 'package inner\n\nfunc main() (int, error) {\n\treturn 7, nil\n}\n';
    const binary = goBinaryPath(cacheDir, content);
    mkdirSync(dirname(binary), { recursive: true });
    writeFileSync(binary, '#!/bin/sh\necho \'{"ok":true,"result":7}\' >&3\n');
    chmodSync(binary, 0o755);
    expect(resultOf((await runOnce(runner, request('go', content))).outcome)).toBe(7);
    expect(resultOf((await runOnce(runner, request('go', content))).outcome)).toBe(7);
    // Creating the version again builds it anew, with the loop.
    expect(await new GoCompiler({ cacheDir }).compile('go', content)).toEqual({ ok: true });
    expect(readFileSync(binary).subarray(0, 4).toString('latin1')).toBe('\x7fELF');
    expect(resultOf((await runOnce(runner, request('go', content))).outcome)).toBe(7);
  }, 240_000);
  it('fail a binary built before the serve loop at the output limit when its result line never ends', async () => {
    const content = 'package inner\n\nfunc main() (int, error) {\n\treturn 8, nil\n}\n';
    const binary = goBinaryPath(cacheDir, content);
    mkdirSync(dirname(binary), { recursive: true });
    writeFileSync(binary, "#!/bin/sh\nwhile :; do printf '%01000d' 0; done >&3\n");
    chmodSync(binary, 0o755);
    const error = errorOf((await runOnce(runner, request('go', content, { timeoutMs: 20_000 }))).outcome);
    expect(error.name).toBe('OutputLimitExceeded');
  }, 60_000);
});
