import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';

/**
 * The service's own installation, which a jail shows read-only at its real path even when it lies
 * under /tmp (a clone there): B may read it like anyone on the machine, so the search skips it.
 */
const INSTALL_ROOT = resolve(import.meta.dirname, '../..');

/**
 * Canaries for issue 14, as an attacker would try them: two ordinary users of one workspace, and
 * job B (bob) goes after job A (alice) while A holds a secret in its token, a `$var:` argument and
 * files. Both shells run these; the AWS shell's emulation runs the sandbox handlers in-process on
 * this machine with the same runtime, so what it shows is the runtime's confinement, while the
 * Lambda configuration itself (tenant isolation) is covered by the CDK assertions.
 */

let s: TestServer;
let alice: string;
let bob: string;
const SECRET = `canary-${Math.random().toString(36).slice(2)}`;
const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function member(username: string): Promise<string> {
  expect((await s.post('/api/users/create', { username, email: `${username}@example.com`, password: `${username}-password` })).status).toBe(201);
  expect((await s.post(`${ws()}/workspaces/add_user`, { username, role: 'developer' })).status).toBe(201);
  const login = await s.fetch('/api/auth/login', { ...json({ email: `${username}@example.com`, password: `${username}-password` }), token: null });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
  const res = await s.fetch('/api/users/tokens/create', { ...json({ label: username }), token: null, headers: { cookie, 'content-type': 'application/json' } });
  expect(res.status).toBe(201);
  return res.text();
}

const runWait = async (path: string, token: string, args: unknown = {}) =>
  (await s.fetch(`${ws()}/jobs/run_wait_result/p/${path}`, { ...json(args), token })).json();

const startJob = async (path: string, token: string, args: unknown = {}) => {
  const res = await s.fetch(`${ws()}/jobs/run/p/${path}`, { ...json(args), token });
  expect(res.status).toBe(201);
  return res.text();
};

/** Every command line on the host, as `ps` shows them to anyone. */
const hostCommandLines = () => execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });

beforeAll(async () => {
  s = await startServer({ env: { SVC_JOB_TIMEOUT_SECONDS: '30', SVC_JOB_MEMORY_MB: '256', SVC_JOB_MAX_PROCESSES: '64' } });
  alice = await member('alice');
  bob = await member('bob');
  expect((await s.fetch(`${ws()}/variables/create`, { ...json({ path: 'u/alice/canary', value: SECRET, is_secret: true }), token: alice })).status).toBe(201);
}, 120_000);
afterAll(() => s?.stop());

describe('job B cannot reach job A', () => {
  it('cannot read A token, variable or files, list or signal A processes, nor see the data dir or the server environment', async () => {
    // A: the secret arrives as a `$var:` argument, goes into files in its dir, /tmp and /dev/shm,
    // and A keeps running (its OV_TOKEN in its environment) while B looks.
    await createScript(s, 'u/alice/holder', 'bash', 'secret="$1"\necho "$secret" > mine.txt; echo "$secret" > /tmp/a-secret; echo "$secret" > /dev/shm/a-secret\necho "token-$OV_TOKEN" > token.txt\necho ready\nsleep 6\necho done\n');
    const a = await startJob('u/alice/holder', alice, { secret: '$var:u/alice/canary' });
    await expect.poll(async () => (await (await s.fetch(`${ws()}/jobs_u/get/${a}`)).json()).logs ?? '', { timeout: 20_000 }).toContain('ready');

    // The host's `ps` (anyone on the machine) shows no secret either.
    expect(hostCommandLines()).not.toContain(SECRET);

    // B is handed the canary only to recognise it: a needle file in its own dir, which it skips.
    await createScript(
      s,
      'u/bob/snoop',
      'bash',
      `needle="$1"
printf '%s\\n' "$needle" > needle.txt
unset needle
{
  for p in /proc/[0-9]*; do tr '\\0' ' ' < "$p/environ"; tr '\\0' ' ' < "$p/cmdline"; echo; done
  find /tmp /dev/shm /var/tmp \\( -path "$PWD" -o -path ${INSTALL_ROOT} \\) -prune -o -type f -print -exec cat {} \\;
  ps -eo args
  ls -a ${s.dataDir}
} > seen.txt 2>/dev/null
found=$(grep -c -F -f needle.txt seen.txt)
me=$(id -u)
foreign=0
signalled=0
for p in /proc/[0-9]*; do
  [ "$(stat -c %u "$p" 2>/dev/null)" = "$me" ] && continue
  foreign=$((foreign + 1))
  kill -9 "\${p#/proc/}" 2>/dev/null && signalled=$((signalled + 1))
done
data=$(ls -a ${s.dataDir} 2>&1 | tr '\\n' ' ')
rm -f needle.txt seen.txt
echo "{\\"found\\": $found, \\"foreign\\": $foreign, \\"signalled\\": $signalled, \\"uid\\": $me, \\"data_dir\\": \\"$data\\"}"
`,
    );
    const report = await runWait('u/bob/snoop', bob, { needle: SECRET });
    // Not in any process's environment or command line, any file in /tmp or /dev/shm, nor `ps`.
    expect(report.found).toBe(0);
    // B sees (and so can signal) no process but its own: A is untouched.
    expect(report.foreign).toBe(0);
    expect(report.signalled).toBe(0);
    expect(report.uid).not.toBe(0);
    // Hidden (an empty directory stands in its place) or refused: never the database or the keys.
    expect(report.data_dir).not.toMatch(/svc\.db|\.key/);

    const done = await waitForJob(s, a, 30_000);
    expect(done.status).toBe('success');
    expect(done.logs).toContain('done');
    expect(hostCommandLines()).not.toContain(SECRET);
  }, 90_000);
});

describe("a job's mount table", () => {
  it('lists its own view only: not the data dir, nor the job slots of other processes', async () => {
    // Before, the jail bound the host's / recursively: every host mount came along, the slots of
    // every service on the machine among them, and the tmpfs hiding the data dir sat at its path.
    // Bash: on AWS a Python job runs in the Python sandbox function, which has no jail (Lambda).
    await createScript(
      s,
      'u/alice/mounts',
      'bash',
      `points=$(cut -d' ' -f5 /proc/self/mountinfo | paste -sd, -)
seen=$( { cat /proc/self/mountinfo /proc/mounts; tr '\\0' ' ' < /proc/1/cmdline; ls -a /tmp; } | base64 -w0)
echo "{\\"points\\": \\"$points\\", \\"cwd\\": \\"$PWD\\", \\"seen\\": \\"$seen\\"}" > result.json
`,
    );
    const report = await runWait('u/alice/mounts', alice);
    const points = String(report.points).split(',');
    expect(points).toContain('/proc');
    expect(Buffer.from(report.seen, 'base64').toString()).not.toContain(s.dataDir);
    // The only slot path a job sees is the one its own directory lies in.
    const slotMounts = points.filter((point) => point.includes('svc-job-slots'));
    expect(slotMounts.length).toBeGreaterThan(0);
    expect(slotMounts.filter((point) => !String(report.cwd).startsWith(point))).toEqual([]);
  }, 60_000);
});

describe('namespaces inside a job', () => {
  it('refuses a job a user namespace of its own (and with it any capability over new namespaces)', async () => {
    await createScript(s, 'u/alice/userns', 'bash', 'if unshare -Ur true 2>/dev/null; then echo made; else echo refused; fi\n');
    expect(await runWait('u/alice/userns', alice)).toBe('refused');
  }, 60_000);
});

describe("the removal of a job's directory", () => {
  it("never follows a link the job swaps in while it is removed: a host file of the same name stays", async () => {
    // The runner (root) removed the job's directory with fs.rm, which walks by path: a thread the
    // job left running replaced a directory being emptied with a link to a host directory, and root
    // unlinked the file of the same name there. The target is any path on the host.
    const victim = mkdtempSync(join(tmpdir(), 'svc-victim-'));
    writeFileSync(join(victim, 'canary.key'), 'precious');
    await createScript(
      s,
      'u/alice/swapper',
      'python3',
      `import os, threading

def main(victim: str):
    os.mkdir("y")
    # A tmpfs lists the newest entry first: the name to strike comes last.
    open("y/canary.key", "w").close()
    for i in range(20000):
        open(f"y/f{i:05d}", "w").close()
    def swap():
        while os.path.exists("y/f19999"):  # listed first, so removed first
            pass
        os.rename("y", "y2")
        os.symlink(victim, "y")
    threading.Thread(target=swap, daemon=True).start()
    return "planted"
`,
    );
    try {
      const result = await runWait('u/alice/swapper', alice, { victim });
      expect(readdirSync(victim)).toEqual(['canary.key']);
      expect(result).toBe('planted');
    } finally {
      rmSync(victim, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('a job that closes its own output', () => {
  it('is answered with its result, not held until its timeout, and the next run gets a working process', async () => {
    // The TypeScript shim wrote the result behind the log on fd 1, which the job had closed.
    await createScript(
      s,
      'u/alice/closes_stdout',
      'bun',
      'import { closeSync } from "node:fs";\n\nexport async function main() {\n  closeSync(1);\n  closeSync(2);\n  await new Promise((r) => setTimeout(r, 200));\n  return "after closing";\n}\n',
    );
    expect(await runWait('u/alice/closes_stdout', alice)).toBe('after closing');
    expect(await runWait('u/alice/closes_stdout', alice)).toBe('after closing');
  }, 60_000);

  it('is answered with its result in Python too: silenced with dup2, or sys.stdout closed', async () => {
    // Silencing a C library's output by putting /dev/null on fd 1 held the job until its timeout;
    // closing sys.stdout made the shim itself fail.
    await createScript(s, 'u/alice/silences_py', 'python3', 'import os\n\ndef main():\n    fd = os.open(os.devnull, os.O_WRONLY)\n    os.dup2(fd, 1)\n    os.dup2(fd, 2)\n    print("not logged")\n    return "after silencing"\n');
    await createScript(s, 'u/alice/closes_py', 'python3', 'import sys\n\ndef main():\n    sys.stdout.close()\n    return "after closing"\n');
    expect(await runWait('u/alice/silences_py', alice)).toBe('after silencing');
    expect(await runWait('u/alice/silences_py', alice)).toBe('after silencing');
    expect(await runWait('u/alice/closes_py', alice)).toBe('after closing');
  }, 90_000);
});

describe("a job's token carries exactly the rights of what started it", () => {
  it('gives a job started by a scoped token those scopes, not the user full rights', async () => {
    await createScript(
      s,
      'u/alice/read_var',
      'python3',
      `import os, urllib.request, urllib.error
def main():
    url = os.environ["BASE_INTERNAL_URL"] + "/api/w/" + os.environ["OV_WORKSPACE"] + "/variables/get/u/alice/canary"
    req = urllib.request.Request(url, headers={"Authorization": "Bearer " + os.environ["OV_TOKEN"]})
    try:
        with urllib.request.urlopen(req) as res:
            return res.status
    except urllib.error.HTTPError as e:
        return e.code
`,
    );
    // alice's own token: her job reads her variable.
    expect(await runWait('u/alice/read_var', alice)).toBe(200);
    // A token of alice's that may only run her scripts: its job may run, not read variables.
    const created = await s.fetch('/api/users/tokens/create', { ...json({ label: 'runner', scopes: ['jobs:run:u/alice/*'] }), token: alice });
    expect(created.status).toBe(201);
    const scoped = await created.text();
    expect(await runWait('u/alice/read_var', scoped)).toBe(403);
  });
});

describe('nothing outlives its job', () => {
  it('ends a `setsid sleep &` child with its job', async () => {
    await createScript(s, 'u/alice/escape', 'bash', 'setsid sleep 317 >/dev/null 2>&1 < /dev/null &\necho started\n');
    expect(await runWait('u/alice/escape', alice)).toBe('started');
    await expect.poll(() => hostCommandLines().includes('sleep 317')).toBe(false);
  });

  it('never lets a thread a job left running carry on into the next job', async () => {
    await createScript(
      s,
      'u/alice/thread',
      'python3',
      'import threading, time\ndef main(start: bool = False):\n    before = threading.active_count()\n    if start:\n        threading.Thread(target=time.sleep, args=(319,), daemon=True).start()\n    return before\n',
    );
    expect(await runWait('u/alice/thread', alice, { start: true })).toBe(1);
    // The next job of the same script finds no thread of the last one.
    expect(await runWait('u/alice/thread', alice)).toBe(1);
  });
});

describe('limits', () => {
  beforeAll(async () => {
    await createScript(s, 'u/alice/ping', 'python3', 'def main():\n    return "pong"\n');
  });

  it('fails a job allocating 10 GiB with a clear error, while other jobs keep answering', async () => {
    // A Python allocation started from a Bash job: in both shells this runs in the Node runtime.
    await createScript(s, 'u/alice/hog', 'bash', 'python3 -c \'block = b"x" * (10 * 1024 ** 3)\'\necho survived\n');
    const hog = runWait('u/alice/hog', alice);
    const pings = await Promise.all([1, 2, 3].map(() => runWait('u/alice/ping', alice)));
    expect(pings).toEqual(['pong', 'pong', 'pong']);
    const result = await hog;
    expect(result.error.message).toMatch(/^memory limit \d+ (MiB|GiB) exceeded$/);
  }, 60_000);

  it('fails a fork bomb with a clear error naming the process limit, while other jobs keep answering', async () => {
    await createScript(s, 'u/alice/bomb', 'bash', 'bomb() { bomb | bomb & }\nbomb\nsleep 20\n');
    const bomb = runWait('u/alice/bomb', alice);
    const pings = await Promise.all([1, 2, 3].map(() => runWait('u/alice/ping', alice)));
    expect(pings).toEqual(['pong', 'pong', 'pong']);
    const result = await bomb;
    expect(result.error.message).toMatch(/process limit \d+ reached/);
    expect(await runWait('u/alice/ping', alice)).toBe('pong');
  }, 60_000);
});

describe('per-workspace limits', () => {
  it('lets a workspace admin lower the limits for its jobs, refuses bad input with a 400 and changes nothing', async () => {
    expect(await (await s.fetch(`${ws()}/workspaces/job_limits`)).json()).toEqual({});
    for (const bad of [{ memory_mb: -1 }, { memory_mb: 'lots' }, { max_processes: 1.5 }, { disk: 1 }]) {
      expect((await s.post(`${ws()}/workspaces/job_limits`, bad)).status).toBe(400);
    }
    // A developer is no workspace admin.
    expect((await s.fetch(`${ws()}/workspaces/job_limits`, { ...json({ memory_mb: 1 }), token: alice })).status).toBe(403);
    expect(await (await s.fetch(`${ws()}/workspaces/job_limits`)).json()).toEqual({});

    await createScript(s, 'u/alice/medium', 'bash', 'python3 -c \'block = b"x" * (160 * 1024 ** 2)\'\necho fits\n');
    expect(await runWait('u/alice/medium', alice)).toBe('fits');
    const set = await s.post(`${ws()}/workspaces/job_limits`, { memory_mb: 96 });
    expect(set.status).toBe(200);
    expect(await set.json()).toEqual({ memory_mb: 96 });
    expect((await runWait('u/alice/medium', alice)).error.message).toBe('memory limit 96 MiB exceeded');
    // Above the instance's limit (256 MiB here) a workspace setting changes nothing.
    await s.post(`${ws()}/workspaces/job_limits`, { memory_mb: 100_000 });
    expect(await runWait('u/alice/medium', alice)).toBe('fits');
    await s.post(`${ws()}/workspaces/job_limits`, {});
  }, 60_000);
});

describe('the CPU time limit', () => {
  // What a job burns, measured as RLIMIT_CPU counts it: user and system time of its process.
  const burn = (ms: number) =>
    `export function main() { const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; }; const end = cpu() + ${ms}; while (cpu() < end) {} return 'done'; }`;

  it("gives every job of a warm process the workspace's whole CPU time limit, and names the limit when a job exceeds it", async () => {
    expect((await s.post(`${ws()}/workspaces/job_limits`, { cpu_seconds: 1 })).status).toBe(200);
    try {
      // 0.6 s a run under a 1 s limit: a process that kept its CPU time over all its jobs failed the second.
      await createScript(s, 'u/alice/crunch', 'bun', burn(600));
      const results = [];
      for (let i = 0; i < 5; i++) results.push(await runWait('u/alice/crunch', alice));
      expect(results).toEqual(['done', 'done', 'done', 'done', 'done']);

      await createScript(s, 'u/alice/spin', 'bun', burn(60_000));
      await createScript(s, 'u/alice/spin_sh', 'bash', 'while :; do :; done\n');
      for (const path of ['u/alice/spin', 'u/alice/spin_sh']) {
        expect((await runWait(path, alice)).error).toEqual({ name: 'CpuLimitExceeded', message: 'CPU time limit 1s exceeded' });
      }
      expect(await runWait('u/alice/crunch', alice)).toBe('done');
    } finally {
      await s.post(`${ws()}/workspaces/job_limits`, {});
    }
  }, 60_000);

  it('names the limit when a job that ignores SIGXCPU is killed at it', async () => {
    expect((await s.post(`${ws()}/workspaces/job_limits`, { cpu_seconds: 1 })).status).toBe(200);
    try {
      // Each ignores the warning the kernel sends at the soft limit and is killed (SIGKILL) at the hard one.
      await createScript(s, 'u/alice/deaf_ts', 'bun', `export function main() { process.on('SIGXCPU', () => {}); for (;;) {} }`);
      await createScript(s, 'u/alice/deaf_py', 'python3', 'import signal\n\ndef main():\n    signal.signal(signal.SIGXCPU, signal.SIG_IGN)\n    while True:\n        pass\n');
      await createScript(s, 'u/alice/deaf_sh', 'bash', "trap '' XCPU\nwhile :; do :; done\n");
      const errors = await Promise.all(['u/alice/deaf_ts', 'u/alice/deaf_py', 'u/alice/deaf_sh'].map(async (path) => (await runWait(path, alice)).error));
      expect(errors).toEqual(Array(3).fill({ name: 'CpuLimitExceeded', message: 'CPU time limit 1s exceeded' }));
    } finally {
      await s.post(`${ws()}/workspaces/job_limits`, {});
    }
  }, 60_000);
});

describe("a Python job's file limits", () => {
  it("holds a Python job to the workspace's open files and file size limits", async () => {
    const probe = [
      'import errno, os',
      '',
      'def main():',
      '    found = []',
      '    files = []',
      '    try:',
      '        for i in range(100):',
      '            files.append(open(os.path.join(os.environ["HOME"], f"f{i}"), "w"))',
      '        found.append("opened 100")',
      '    except OSError as error:',
      '        found.append(errno.errorcode[error.errno])',
      '    for f in files:',
      '        f.close()',
      '    try:',
      '        with open(os.path.join(os.environ["HOME"], "big"), "wb") as f:',
      '            f.write(b"x" * 2 * 1024 * 1024)',
      '        found.append("wrote 2 MiB")',
      '    except OSError as error:',
      '        found.append(errno.errorcode[error.errno])',
      '    return found',
      '',
    ].join('\n');
    await createScript(s, 'u/alice/file_limits', 'python3', probe);
    expect(await runWait('u/alice/file_limits', alice)).toEqual(['opened 100', 'wrote 2 MiB']);
    expect((await s.post(`${ws()}/workspaces/job_limits`, { open_files: 32, file_mb: 1 })).status).toBe(200);
    try {
      expect(await runWait('u/alice/file_limits', alice)).toEqual(['EMFILE', 'EFBIG']);
    } finally {
      await s.post(`${ws()}/workspaces/job_limits`, {});
    }
  }, 60_000);
});

describe('what a warm process keeps from one job to the next', () => {
  /** The distinct results of `runs` sequential runs of `path` under the workspace job limits `limits`. */
  async function resultsUnder(limits: Record<string, number>, path: string, runs: number): Promise<string[]> {
    expect((await s.post(`${ws()}/workspaces/job_limits`, limits)).status).toBe(200);
    try {
      const results = new Set<string>();
      for (let i = 0; i < runs; i++) results.add(JSON.stringify(await runWait(path, alice)));
      return [...results];
    } finally {
      await s.post(`${ws()}/workspaces/job_limits`, {});
    }
  }

  it('never fails a later run for the files earlier runs left open', async () => {
    // Each run leaves a file open; with one process per version, run 50 or so had none left.
    await createScript(s, 'u/alice/leaky', 'bun', 'import { openSync } from "node:fs";\nexport function main() { openSync(`${process.env.HOME}/left-open`, "w"); return "ok"; }\n');
    expect(await resultsUnder({ open_files: 64 }, 'u/alice/leaky', 120)).toEqual(['"ok"']);
  }, 60_000);

  it('never fails a later run for the files earlier runs left in /tmp', async () => {
    // Each run leaves 4 MiB in /tmp under a 32 MiB quota: with one process per version, run 8 or so failed.
    await createScript(s, 'u/alice/untidy', 'python3', 'import uuid\ndef main():\n    with open("/tmp/" + uuid.uuid4().hex, "wb") as f:\n        f.write(b"x" * 4 * 1024 * 1024)\n    return "ok"\n');
    expect(await resultsUnder({ disk_mb: 32 }, 'u/alice/untidy', 30)).toEqual(['"ok"']);
  }, 60_000);
});

describe('the network boundary (README "Job confinement")', () => {
  it("refuses a job's requests to the service's own port, another loopback service and the metadata address; BASE_INTERNAL_URL answers", async () => {
    const other = createServer((_req, res) => res.end('other loopback service'));
    await new Promise<void>((ready) => other.listen(0, '127.0.0.1', ready));
    try {
      await createScript(
        s,
        'u/alice/reach',
        'nativets',
        `import * as svc from 'svc-client';
const attempt = async (url: string) => {
  try {
    const res = await fetch(url);
    return res.status + ' ' + (await res.text()).slice(0, 300);
  } catch (e: any) {
    return 'ERROR ' + (e.cause?.message ?? e.message);
  }
};
export async function main(servicePort: number, otherPort: number) {
  return {
    variable: await svc.getVariable('u/alice/canary'),
    service: await attempt('http://127.0.0.1:' + servicePort + '/api/version'),
    other: await attempt('http://127.0.0.1:' + otherPort + '/'),
    metadata: await attempt('http://169.254.169.254/latest/meta-data/'),
  };
}`,
      );
      const servicePort = Number(new URL(s.url).port);
      const otherPort = (other.address() as AddressInfo).port;
      const report = await runWait('u/alice/reach', alice, { servicePort, otherPort });
      expect(report.variable).toBe(SECRET);
      expect(report.service).toMatch(/^ERROR .*ECONNREFUSED/);
      expect(report.other).toMatch(/^ERROR .*ECONNREFUSED/);
      expect(report.metadata).toContain('169.254.169.254 is 169.254.169.254, a loopback, private, link-local or reserved address');
    } finally {
      other.close();
    }
  }, 60_000);

  it("shows a job its own namespace's sockets only, not the host's", async () => {
    await createScript(
      s,
      'u/alice/sockets',
      'bash',
      'cat /proc/net/tcp /proc/net/tcp6 | while read -r _ local _; do p=${local##*:}; [ "$p" != local_address ] && printf "%d\\n" "0x$p"; done | sort -un | paste -sd, -\n',
    );
    const ports = String(await runWait('u/alice/sockets', alice)).split(',').map(Number);
    expect(ports).not.toContain(Number(new URL(s.url).port));
    expect(ports).toEqual([80, 3128]);
  });

  it('fails a job that writes past the disk quota with an error naming it', async () => {
    await createScript(s, 'u/alice/filler', 'bash', 'head -c 67108864 /dev/zero > big || exit 1\necho wrote\n');
    expect((await s.post(`${ws()}/workspaces/job_limits`, { disk_mb: 8 })).status).toBe(200);
    try {
      const error = (await runWait('u/alice/filler', alice)).error;
      expect(error.name).toBe('DiskQuotaExceeded');
      expect(error.message).toContain('disk quota 8 MiB exceeded');
    } finally {
      await s.post(`${ws()}/workspaces/job_limits`, {});
    }
  }, 60_000);
});
