import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Language } from '../../../functions/ports.js';
import { errorOf, eventually, isKeyGone as isProcessGone, isRoot, processKey, TEST_UIDS, makeRunner, recorder, request, resultOf, runOnce } from './runtime-helpers.js';

const { runner, dispose } = makeRunner();
afterAll(dispose);

const ENV = { OV_TOKEN: 'tok', OV_WORKSPACE: 'ws' };
// With the network boundary (root, namespaces), the proxy variables lead to the egress proxy.
const PROXY_ENV_KEYS = ['HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy'];
const BASE_ENV_KEYS = ['HOME', 'LANG', 'PATH', ...(isRoot ? PROXY_ENV_KEYS : [])];

describe('environment', () => {
  beforeAll(() => {
    process.env.SVC_SECRET_TEST = 'x';
  });
  afterAll(() => {
    delete process.env.SVC_SECRET_TEST;
  });

  it.each([
    ['nativets', 'export function main() { return process.env; }'],
    ['python3', 'import os\ndef main():\n    return dict(os.environ)\n'],
  ] as const)('%s sees exactly the job env and nothing of the parent', async (language, content) => {
    const env = resultOf((await runOnce(runner, request(language, content, { env: ENV }))).outcome) as Record<string, string>;
    expect(Object.keys(env).sort()).toEqual([...BASE_ENV_KEYS, 'OV_TOKEN', 'OV_WORKSPACE'].sort());
    expect(env).toMatchObject(ENV);
  });

  it('bash sees the job env and nothing of the parent', async () => {
    const { log } = await runOnce(runner, request('bash', 'env\n', { env: ENV }));
    expect(log).toContain('OV_TOKEN=tok');
    expect(log).not.toContain('SVC_SECRET_TEST');
  });

  it('runs each job in a fresh directory that is removed afterwards', async () => {
    const content = 'import os\ndef main():\n    open("f.txt", "w").write("x")\n    return [os.getcwd(), os.environ["HOME"]]\n';
    const [cwd, home] = resultOf((await runOnce(runner, request('python3', content))).outcome) as string[];
    expect(home).toBe(cwd);
    expect(await eventually(() => !existsSync(cwd))).toBe(true);
  });
});

describe('Node permission model', () => {
  it('confines a TS child to its own dirs: it writes its cwd but reads nothing outside', async () => {
    const content =
      'import { readFileSync, writeFileSync } from "node:fs";\n' +
      'export function main() { writeFileSync("out.txt", "ok"); const own = readFileSync("out.txt", "utf8");\n' +
      '  try { readFileSync("/etc/passwd"); return [own, "read"]; } catch (e: any) { return [own, e.code]; } }';
    expect(resultOf((await runOnce(runner, request('nativets', content))).outcome)).toEqual(['ok', 'ERR_ACCESS_DENIED']);
  });
});

describe('limits', () => {
  const sleepers: Record<Language, string> = {
    nativets:
      'import { spawn } from "node:child_process";\n' +
      'export async function main() { const c = spawn("sleep", ["60"], { stdio: "ignore" }); console.log(`grandchild ${c.pid} ${process.getuid!()}`); await new Promise(() => {}); }',
    bun: '',
    deno: '',
    go: '',
    python3:
      'import os, subprocess, time\ndef main():\n    p = subprocess.Popen(["sleep", "60"])\n    print(f"grandchild {p.pid} {os.getuid()}")\n    time.sleep(60)\n',
    bash: 'sleep 60 &\necho "grandchild $! $(id -u)"\nwait\n',
  };

  /** The grandchild as the host names it (see `processKey`: pids are per namespace). */
  const grandchildOf = (log: string) => {
    const [, pid, uid] = /grandchild (\d+) (\d+)/.exec(log) ?? [];
    return processKey([Number(pid), Number(uid)]);
  };

  it.each(['nativets', 'python3', 'bash'] as const)('%s: a timeout kills the whole process group', async (language) => {
    const rec = recorder();
    const outcome = await runner.run(request(language, sleepers[language], { timeoutMs: 1500 }), rec.hooks, new AbortController().signal);
    expect(errorOf(outcome)).toEqual({ name: 'TimeoutError', message: 'job exceeded its timeout of 1.5s' });
    const pid = grandchildOf(rec.log);
    expect(pid).toBeGreaterThan(0);
    expect(await eventually(() => isProcessGone(pid))).toBe(true);
  });

  it.each([
    ['nativets', 'export function main() { for (let i = 0; i < 1000; i++) console.log("x".repeat(100)); return 1; }'],
    ['python3', 'def main():\n    for i in range(1000):\n        print("x" * 100)\n    return 1\n'],
    ['bash', 'for i in $(seq 1000); do echo xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done\n'],
    ['nativets', 'export async function* main() { for (let i = 0; i < 1000; i++) yield "y".repeat(100); }'],
  ] as const)('%s: output beyond maxOutputBytes fails the job', async (language, content) => {
    const { outcome } = await runOnce(runner, request(language, content, { maxOutputBytes: 10_000 }));
    expect(errorOf(outcome).name).toBe('OutputLimitExceeded');
  });

  it.each(['nativets', 'python3', 'bash'] as const)('%s: abort cancels a running job', async (language) => {
    const controller = new AbortController();
    const rec = recorder();
    const running = runner.run(request(language, sleepers[language]), rec.hooks, controller.signal);
    await expect.poll(() => rec.log).toContain('grandchild');
    controller.abort();
    expect(errorOf(await running).name).toBe('Canceled');
    const pid = grandchildOf(rec.log);
    expect(await eventually(() => isProcessGone(pid))).toBe(true);
  });

  it('an already aborted signal cancels before anything runs', async () => {
    const controller = new AbortController();
    controller.abort();
    const { outcome } = await runOnce(runner, request('nativets', 'export function main() { return 1; }'), controller.signal);
    expect(errorOf(outcome).name).toBe('Canceled');
  });
});

describe.runIf(isRoot)('privileges (the service runs as root)', () => {
  let dir: string;
  let secret: string;
  beforeAll(() => {
    // A world-traversable dir the job's read-only view of the system includes (its /tmp is a
    // private one), so only the file's own mode stands between the job and its content.
    dir = mkdtempSync(join(process.cwd(), '.svc-secret-'));
    chmodSync(dir, 0o755);
    secret = join(dir, 'db.sqlite');
    writeFileSync(secret, 'secret', { mode: 0o600 });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['python3', 'import os\ndef main(path):\n    try:\n        open(path).read()\n        return "read"\n    except PermissionError:\n        return f"denied as {os.getuid()}"\n'],
    ['nativets', 'import { readFileSync } from "node:fs";\nexport function main(path: string) { try { readFileSync(path); return "read"; } catch (e: any) { return `denied as ${process.getuid!()}`; } }'],
    ['bash', 'if cat "$1" >/dev/null 2>&1; then echo read; else echo "denied as $(id -u)"; fi\n'],
  ] as const)('%s cannot read a root-owned 0600 file', async (language, content) => {
    const req = request(language, content, { args: { path: secret }, schema: { type: 'object', properties: { path: {} }, required: [] } });
    // Each job process has a uid of its own from the job range, neither root nor a shared one.
    const denied = resultOf((await runOnce(runner, req)).outcome) as string;
    expect(denied).toMatch(/^denied as \d+$/);
    const uid = Number(denied.split(' ').at(-1));
    expect(uid).toBeGreaterThanOrEqual(TEST_UIDS.first);
    expect(uid).toBeLessThan(TEST_UIDS.first + TEST_UIDS.count);
  });
});
