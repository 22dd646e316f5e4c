import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddressAllowList } from '../../../functions/core/common/address-rules.js';
import { Confiner } from '../../../functions/runtime/confinement.js';
import { JobSlots } from '../../../functions/runtime/job-slots.js';
import type { LocalRunner } from '../../../functions/runtime/index.js';
import { errorOf, isRoot, makeRunner, request, resultOf, runOnce, schemaOf } from './runtime-helpers.js';

/**
 * The network boundary (README "Job confinement"): each confined process in its own network
 * namespace; out only through the service's egress proxy, which refuses loopback, private,
 * link-local and metadata addresses unless allowed; the API at BASE_INTERNAL_URL; no view of host
 * sockets or other cgroups; a disk quota on everything the job writes. Needs root and namespaces.
 */
const boundary = isRoot ? describe : describe.skip;

/** A host service on loopback that jobs must not reach (and the "API" they must). */
let host: Server;
let port = 0;
/** Another service on the host's loopback, not the API: reached only when the allow-list says so. */
let other: Server;
let otherPort = 0;
beforeAll(async () => {
  host = createServer((req, res) => res.end(req.url === '/api/hello' ? 'api answered' : 'host service answered'));
  await new Promise<void>((ready) => host.listen(0, '127.0.0.1', ready));
  port = (host.address() as AddressInfo).port;
  other = createServer((_req, res) => res.end('other service answered'));
  await new Promise<void>((ready) => other.listen(0, '127.0.0.1', ready));
  otherPort = (other.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((done) => host.close(() => done())));
afterAll(() => new Promise<void>((done) => other.close(() => done())));

const { runner, dispose } = makeRunner();
afterAll(dispose);

/** Its own uids, far from the shared runner's, with 127.0.0.1 allowed past the proxy. */
const allowing = new Confiner({
  uidRange: { first: 800_000 + (process.pid % 5000) * 20, count: 20 },
  network: { mode: 'boundary', allow: new AddressAllowList('127.0.0.1', 'test') },
});
const allowed = makeRunner({ confiner: allowing });
afterAll(allowed.dispose);

const env = () => ({ BASE_INTERNAL_URL: `http://127.0.0.1:${port}`, OV_TOKEN: 't', OV_WORKSPACE: 'ws' });

/** Python: what each URL answered, or the error it raised. `proxy: true` forces the proxy. */
const PY_FETCH = `import os, urllib.request
def main(urls: list, proxy: bool = False):
    if proxy:
        # The namespace's loopback is its own: the host's is reached only through the proxy.
        os.environ.pop("NO_PROXY"); os.environ.pop("no_proxy")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": os.environ["HTTP_PROXY"]})) if proxy else urllib.request.build_opener()
    out = []
    for url in urls:
        url = os.environ["BASE_INTERNAL_URL"] + "/api/hello" if url == "BASE" else url
        try:
            out.append(opener.open(url, timeout=5).read().decode())
        except Exception as e:
            out.append("ERROR " + str(e) + " " + (e.read().decode() if hasattr(e, "read") else ""))
    return out
`;

const TS_FETCH = `export async function main(urls: string[]) {
  const out: string[] = [];
  for (const given of urls) {
    const url = given === 'BASE' ? process.env.BASE_INTERNAL_URL + '/api/hello' : given;
    try { out.push(await (await fetch(url)).text()); } catch (e: any) { out.push('ERROR ' + (e.cause?.message ?? e.message)); }
  }
  return out;
}`;

boundary('network boundary', () => {
  it('python3: loopback services and the metadata address fail, the API at BASE_INTERNAL_URL answers', async () => {
    const urls = [`http://127.0.0.1:${port}/`, 'http://169.254.169.254/latest/meta-data/', `http://10.0.0.1:${port}/`, 'BASE'];
    const { outcome } = await runOnce(runner, request('python3', PY_FETCH, { env: env(), schema: schemaOf('urls'), args: { urls } }));
    const [loopback, metadata, privateAddress, api] = resultOf(outcome) as string[];
    expect(loopback).toMatch(/^ERROR .*(refused|Errno 111)/i);
    expect(metadata).toContain('ERROR');
    expect(metadata).toContain('169.254.169.254 is 169.254.169.254, a loopback, private, link-local or reserved address');
    expect(privateAddress).toContain('10.0.0.1 is 10.0.0.1');
    expect(api).toBe('api answered');
  });

  it('typescript: fetch goes through the proxy, so the same rules hold; BASE_INTERNAL_URL answers', async () => {
    const urls = [`http://127.0.0.1:${port}/`, 'http://169.254.169.254/latest/meta-data/', 'BASE'];
    const { outcome } = await runOnce(runner, request('nativets', TS_FETCH, { env: env(), schema: schemaOf('urls'), args: { urls } }));
    const [loopback, metadata, api] = resultOf(outcome) as string[];
    expect(loopback).toMatch(/^ERROR .*ECONNREFUSED/);
    expect(metadata).toContain('169.254.169.254, a loopback, private, link-local or reserved address');
    expect(api).toBe('api answered');
  });

  it('bash: a raw TCP connection to a host loopback port is refused', async () => {
    const { outcome } = await runOnce(runner, request('bash', `if (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null; then echo reached; else echo refused; fi`, { env: env() }));
    expect(resultOf(outcome)).toBe('refused');
  });

  it('an address on SVC_JOB_NETWORK_ALLOW is reached through the proxy; the same request is refused without it', async () => {
    const req = () => request('python3', PY_FETCH, { env: env(), schema: schemaOf('urls', 'proxy'), args: { urls: [`http://127.0.0.1:${otherPort}/`], proxy: true } });
    expect(resultOf((await runOnce(allowed.runner, req())).outcome)).toEqual(['other service answered']);
    const [refused] = resultOf((await runOnce(runner, req())).outcome) as string[];
    expect(refused).toContain('ERROR HTTP Error 403');
    expect(refused).toContain('SVC_JOB_NETWORK_ALLOW');
  });

  it("/proc/net/tcp shows the job's namespace only, and /sys/fs/cgroup shows no other group", async () => {
    const script = `import os
def main():
    ports = [int(line.split()[1].split(":")[1], 16) for line in open("/proc/net/tcp").read().splitlines()[1:]]
    return {"ports": ports, "cgroups": os.listdir("/sys/fs/cgroup")}
`;
    const { ports, cgroups } = resultOf((await runOnce(runner, request('python3', script, { env: env() }))).outcome) as { ports: number[]; cgroups: string[] };
    expect(ports).not.toContain(port);
    // The namespace's own two listeners (API forward, egress proxy), nothing else.
    expect(new Set(ports)).toEqual(new Set([80, 3128]));
    expect(cgroups).toEqual([]);
  });
});

boundary('slots coming and going', () => {
  const workRoot = mkdtempSync(join(tmpdir(), 'svc-jails-'));
  chmodSync(workRoot, 0o711);
  const source = allowing.forRunner(workRoot);
  afterAll(() => source.close());

  it('a sandbox that copied the mount tree before a slot set closed still finds each slot mount in its copy', async () => {
    // What a starting sandbox does first: copy the mount tree (here a held copy), then remount it.
    const slots = new JobSlots({ api: (s) => s.destroy(), proxy: (s) => s.destroy() }, 0);
    const taken = await Promise.all([slots.take(1 << 20), slots.take(1 << 20)]);
    const points = taken.flatMap((slot) => [slot.dir, slot.netns]);
    const copy = spawn('unshare', ['--mount', '--propagation', 'unchanged', 'sh', '-c', 'echo copied; exec sleep 120'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      await new Promise((copied) => copy.stdout.once('data', copied));
      const mountsInCopy = () => readFileSync(`/proc/${copy.pid}/mountinfo`, 'utf8').split('\n').map((line) => line.split(' ')[4]);
      expect(points.filter((point) => mountsInCopy().includes(point))).toEqual(points);
      await slots.close();
      // Gone from the service's own tree at once; the copy keeps them (removing their mount points
      // would have detached them there, mid-start).
      for (const point of points) expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(` ${point} `);
      expect(points.filter((point) => mountsInCopy().includes(point))).toEqual(points);
    } finally {
      copy.kill('SIGKILL');
    }
  });

  it('sandboxes start while the slots of others are made, unmounted and removed beside them', async () => {
    // A sandbox copies every mount under / when it starts and remounts each read-only; a mount
    // point removed meanwhile (unlinking one detaches its mount in every namespace) failed the
    // start with "Unable to apply mount flags". Here another slot set closes, again and again,
    // while four jails start their sandbox over and over.
    const jails = await Promise.all(Array.from({ length: 4 }, () => source.open({})));
    const failures: string[] = [];
    let churning = true;
    let started = 0;
    const starters = jails.map(async (jail) => {
      while (churning) {
        const { command, args, uid } = jail.wrap('/bin/true', [], []);
        const run = spawn(command, args, { uid, gid: uid, stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        run.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
        const code = await new Promise((done) => run.once('close', done));
        started++;
        if (code !== 0) failures.push(`exit ${code}: ${stderr.trim()}`);
      }
    });
    try {
      for (let round = 0; round < 6; round++) {
        const slots = new JobSlots({ api: (s) => s.destroy(), proxy: (s) => s.destroy() }, 0);
        await Promise.all(Array.from({ length: 24 }, () => slots.take(1 << 20)));
        await slots.close();
      }
    } finally {
      churning = false;
      await Promise.all(starters);
      await Promise.all(jails.map((jail) => jail.release()));
    }
    expect(started).toBeGreaterThan(0);
    expect(failures).toEqual([]);
    // Slot mounts are private too: an unmount of one reaches no other namespace.
    const own = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((line) => line.split(' '))
      .filter((fields) => (fields[4] ?? '').includes(`/slots-${process.pid}-`));
    expect(own.length).toBeGreaterThan(0);
    for (const fields of own) expect(fields.slice(6, fields.indexOf('-')).join(' '), fields[4]).not.toMatch(/shared:/);
  }, 120_000);
});

boundary('disk quota', () => {
  const disk = makeRunner();
  afterAll(disk.dispose);
  const limits = { diskBytes: 16 * 1024 * 1024 };

  it.each([
    ['python3', 'def main(where: str):\n    with open(where + "/big", "wb") as f:\n        for _ in range(64):\n            f.write(b"x" * 1048576)\n    return "wrote"\n'],
    ['bash', 'head -c 67108864 /dev/zero > "$1/big" || exit 1\necho wrote\n'],
  ] as const)('%s: writing past the quota fails the job with the quota named, and nothing reaches the host disk', async (language, content) => {
    for (const where of ['.', '/tmp', '/dev/shm']) {
      const { outcome } = await runOnce(disk.runner, request(language, content, { env: env(), limits, schema: schemaOf('where'), args: { where }, scriptHash: `${language}-${where}` }));
      const error = errorOf(outcome);
      expect(error.name, where).toBe('DiskQuotaExceeded');
      expect(error.message).toContain('disk quota 16 MiB exceeded');
    }
    expect(largestFileUnder((disk.runner as LocalRunner).workRoot)).toBeLessThan(1024 * 1024);
  });
});

/** The largest regular file under `dir` on the host's own file system (mounts skipped). */
function largestFileUnder(dir: string): number {
  const device = statSync(dir).dev;
  let largest = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stats = statSync(path, { throwIfNoEntry: false });
    if (!stats || stats.dev !== device) continue;
    if (stats.isDirectory()) largest = Math.max(largest, largestFileUnder(path));
    else largest = Math.max(largest, stats.size);
  }
  return largest;
}
