import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type TestServer } from './harness.js';
import { startFakeNpmRegistry, type FakeNpmRegistry } from './fake-npm-registry.js';

/**
 * An install is held to the jobs' network boundary (docs/security.md): with install scripts allowed
 * (SVC_NPM_INSTALL_SCRIPTS=1), a package's postinstall that ignores npm's proxy settings and
 * connects straight to a service on the host's loopback (here a listener the test opens, standing
 * for the service's own API, a database, any local daemon) or to the cloud metadata address reaches
 * nothing, while npm itself still installs from the instance's registry, which is on loopback too
 * (through the installer's egress proxy). Local shell only: on AWS install scripts never run.
 */
const aws = process.env.SVC_TEST_SHELL === 'aws';
let s: TestServer;
let registry: FakeNpmRegistry;
let listener: Server;
let depsDir: string;
/** Connections the listener on the host's loopback accepted. */
let accepted = 0;

/**
 * Tries each address directly for up to 3 s, then asks the proxy the usual variables name for the
 * listener, and writes what happened next to the package: the job reads it.
 */
const dialer = (port: number) => `
const net = require('node:net');
const fs = require('node:fs');
const targets = { loopback: ['127.0.0.1', ${port}], metadata: ['169.254.169.254', 80] };
const report = {};
const attempts = Object.entries(targets).map(([name, [host, port]]) => new Promise((resolve) => {
  const socket = net.connect({ host, port });
  const done = (outcome) => { report[name] = report[name] || outcome; socket.destroy(); resolve(); };
  socket.setTimeout(3000, () => done('timeout'));
  socket.once('connect', () => done('connected'));
  socket.once('error', (error) => done(error.code || error.message));
}));
const proxied = new Promise((resolve) => {
  const proxy = process.env.HTTP_PROXY ? new URL(process.env.HTTP_PROXY) : null;
  if (!proxy) return resolve((report.viaProxy = 'no proxy'));
  const socket = net.connect({ host: proxy.hostname, port: Number(proxy.port) }, () => socket.write('CONNECT 127.0.0.1:${port} HTTP/1.1\\r\\nHost: 127.0.0.1:${port}\\r\\n\\r\\n'));
  socket.setTimeout(3000, () => socket.destroy(new Error('timeout')));
  socket.once('data', (chunk) => { report.viaProxy = chunk.toString().split(' ')[1]; socket.destroy(); resolve(); });
  socket.once('error', (error) => { report.viaProxy = report.viaProxy || error.code || error.message; resolve(); });
});
Promise.all([...attempts, proxied]).then(() => fs.writeFileSync('dialed.json', JSON.stringify(report)));
`;

beforeAll(async () => {
  if (aws) return;
  listener = createServer((socket) => {
    accepted++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const port = (listener.address() as AddressInfo).port;
  registry = await startFakeNpmRegistry([
    {
      name: 'svc-test-dialer',
      version: '1.0.0',
      type: 'module',
      main: 'index.js',
      files: {
        'index.js': 'import { readFileSync } from "node:fs";\nexport const dialed = () => JSON.parse(readFileSync(new URL("./dialed.json", import.meta.url), "utf8"));\n',
        'dial.cjs': dialer(port),
      },
      scripts: { postinstall: 'node dial.cjs' },
    },
  ]);
  depsDir = mkdtempSync(join(tmpdir(), 'svc-deps-net-'));
  s = await startServer({ env: { NPM_CONFIG_REGISTRY: registry.url, SVC_NPM_INSTALL_SCRIPTS: '1', SVC_DEPS_DIR: depsDir } });
}, 120_000);

afterAll(async () => {
  await s?.stop();
  await registry?.close();
  await new Promise<void>((resolve) => (listener ? listener.close(() => resolve()) : resolve()));
  if (depsDir) rmSync(depsDir, { recursive: true, force: true });
});

describe.skipIf(aws)("a package's install script", () => {
  it('reaches neither a service on the host loopback nor the metadata address; the install from the loopback registry succeeds', async (context) => {
    const runtime = (await (await s.fetch('/api/runtime')).json()) as { confinement: { network: string } };
    if (runtime.confinement.network !== 'namespace') return context.skip('no network namespaces on this machine: installs run on the host network (docs/security.md)');
    const content = `import { dialed } from 'svc-test-dialer';\nexport function main() { return dialed(); }\n`;
    const created = await s.post(`/api/w/${s.workspace}/scripts/create`, { path: 'u/admin/dialer', language: 'bun', content });
    expect(created.status, await created.clone().text()).toBe(201);
    const run = await s.fetch(`/api/w/${s.workspace}/jobs/run_wait_result/p/u/admin/dialer`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const body = (await run.json()) as Record<string, string>;
    // The install ran its script (the package holds its report) and succeeded.
    expect(run.status, JSON.stringify(body)).toBe(200);
    // Directly: the namespace's own loopback has nothing there, and no route leaves it. Through
    // the proxy the usual variables name: refused, as for a job (403).
    expect(body).toEqual({ loopback: 'ECONNREFUSED', metadata: 'ENETUNREACH', viaProxy: '403' });
    expect(accepted).toBe(0);
  });
});
