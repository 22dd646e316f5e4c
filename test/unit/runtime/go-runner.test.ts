import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GoCompiler } from '../../../functions/runtime/go-build.js';
import { GO_BINARY_MISSING, GO_NOT_ON_THIS_RUNNER } from '../../../functions/runtime/go-runner.js';
import { errorOf, eventually, isKeyGone, makeRunner, processKey, request, runOnce, schemaOf } from './runtime-helpers.js';

/** The Go runner runs what GoCompiler built at create, confined, and never builds anything itself. */
const cacheDir = mkdtempSync(join(tmpdir(), 'svc-go-builds-'));
const compiler = new GoCompiler({ cacheDir });
const { runner, dispose } = makeRunner({ goCacheDir: cacheDir });
afterAll(async () => {
  await dispose();
  rmSync(cacheDir, { recursive: true, force: true });
});

async function built(content: string) {
  expect(await compiler.compile('go', content)).toEqual({ ok: true });
  return content;
}

const ECHO = `package inner

import (
	"fmt"
	"os"
)

func main(name string, count int) (map[string]any, error) {
	fmt.Println("log line")
	fmt.Fprintln(os.Stderr, "to stderr")
	return map[string]any{"name": name, "count": count, "uid": os.Getuid(), "env": len(os.Environ())}, nil
}
`;

describe('Go runner', () => {
  it('passes only the declared arguments by name, logs stdout and stderr, and answers the result', async () => {
    const content = await built(ECHO);
    const req = request('go', content, { schema: schemaOf('name', 'count'), args: { name: 'ada', count: 3, undeclared: true }, env: { OV_TOKEN: 't' } });
    const { outcome, log } = await runOnce(runner, req);
    expect(outcome).toMatchObject({ ok: true, result: { name: 'ada', count: 3 }, streamed: false });
    expect(log).toContain('log line\n');
    expect(log).toContain('to stderr\n');
  }, 240_000);

  it('never builds on the run path: a version whose build is missing fails, and nothing is built', async () => {
    const content = ECHO.replace('log line', 'never built');
    const before = readdirSync(join(cacheDir, 'bin')).length;
    expect(errorOf((await runOnce(runner, request('go', content))).outcome)).toEqual({ name: 'ExecutionErr', message: GO_BINARY_MISSING });
    expect(readdirSync(join(cacheDir, 'bin')).length).toBe(before);
  });

  it('says so on a runner without Go builds', async () => {
    const bare = makeRunner();
    try {
      expect(errorOf((await runOnce(bare.runner, request('go', ECHO))).outcome)).toEqual({ name: 'ExecutionErr', message: GO_NOT_ON_THIS_RUNNER });
    } finally {
      await bare.dispose();
    }
  });

  it('kills what the program started when the job times out', async () => {
    const content = await built(`package inner

import (
	"fmt"
	"os"
	"os/exec"
	"time"
)

func main() (any, error) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	fmt.Printf("grandchild %d %d\\n", cmd.Process.Pid, os.Getuid())
	time.Sleep(time.Minute)
	return nil, nil
}
`);
    const { outcome, log } = await runOnce(runner, request('go', content, { timeoutMs: 1500 }));
    expect(errorOf(outcome)).toEqual({ name: 'TimeoutError', message: 'job exceeded its timeout of 1.5s' });
    const [, pid, uid] = /grandchild (\d+) (\d+)/.exec(log) ?? [];
    expect(Number(pid)).toBeGreaterThan(0);
    expect(await eventually(() => isKeyGone(processKey([Number(pid), Number(uid)])))).toBe(true);
  }, 120_000);
});
