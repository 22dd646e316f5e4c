import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { isBlockedAddress } from '../../functions/core/common/address-rules.js';
import { awsShellBundle, sharedEndpoints } from '../aws/shared-emulator-endpoints.js';
import { sharedEndpointsToEnv } from '../aws/shared-endpoints.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * Starts the real local service (`bin/svc.js serve`, as `npm start` does) on a random loopback
 * port with its own data directory, and talks to it over HTTP like any client. With
 * SVC_TEST_SHELL=aws the same tests run against the AWS shell on this machine instead: the api and
 * worker Lambda handlers behind emulated API Gateway and SQS, on DynamoDB Local and s3rver
 * (test/aws/aws-shell-server.ts), which takes the same settings and prints the same line.
 */
export interface TestServer {
  url: string;
  token: string;
  workspace: string;
  dataDir: string;
  process: ChildProcess;
  output: () => string;
  /** fetch against the server with the admin token unless headers say otherwise. */
  fetch(path: string, init?: RequestInit & { token?: string | null }): Promise<Response>;
  /** JSON POST to a management endpoint. */
  post(path: string, body: unknown): Promise<Response>;
  stop(): Promise<void>;
  kill9(): Promise<void>;
}

const ROOT = resolve(import.meta.dirname, '../..');

type Shell = 'local' | 'aws';
const SHELL: Shell = process.env.SVC_TEST_SHELL === 'aws' ? 'aws' : 'local';

/** How each shell's server is started: the AWS shell from the run's bundle of it when there is one (test/aws/aws-shell-bundle.ts). */
function serverArgs(shell: Shell): string[] {
  if (shell === 'local') return [join(ROOT, 'bin/svc.js'), 'serve'];
  const bundle = awsShellBundle();
  return bundle ? ['--enable-source-maps', bundle] : ['--import', 'tsx', join(ROOT, 'test/aws/aws-shell-server.ts')];
}

/** The AWS shell starts DynamoDB Local (a JVM) first unless the run shares one, which takes a few seconds on a busy machine. */
const START_TIMEOUT_MS: Record<Shell, number> = { aws: 90_000, local: 30_000 };

/** `shell` overrides SVC_TEST_SHELL, for the aws tier's own tests of the AWS shell. */
/**
 * Where this machine's resolver puts the public npm registry, when that is a range the job network
 * boundary refuses (the test machines resolve it to a documentation-range address, 203.0.113.x):
 * allowed, so jobs reach it (Deno's `npm:` imports) as they reach a public address elsewhere.
 */
async function registryAllowance(): Promise<string[]> {
  try {
    const { address } = await lookup('registry.npmjs.org');
    return isBlockedAddress(address) ? [address] : [];
  } catch {
    return [];
  }
}

export async function startServer(opts: { env?: Record<string, string>; dataDir?: string; token?: string; shell?: Shell; stdio?: StdioOptions } = {}): Promise<TestServer> {
  const shell = opts.shell ?? SHELL;
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'svc-test-'));
  const token = opts.token ?? `test-admin-${Math.random().toString(36).slice(2)}`;
  const child = spawn(process.execPath, serverArgs(shell), {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      // The test run's temporary folder (test/run-tmpdir.ts), where the server keeps its run folder.
      ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
      PORT: '0',
      SVC_DATA_DIR: dataDir,
      SVC_ADMIN_TOKEN: token,
      // The test run's DynamoDB Local and moto (test/aws/shared-emulators.ts), when it shares them.
      ...(shell === 'aws' ? sharedEndpointsToEnv(await sharedEndpoints()) : {}),
      ...opts.env,
      SVC_JOB_NETWORK_ALLOW: [opts.env?.SVC_JOB_NETWORK_ALLOW, ...(await registryAllowance())].filter(Boolean).join(','),
    },
    // A test may hand the server more descriptors, as a supervisor might (inherited-descriptors.test.ts).
    stdio: opts.stdio ?? ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), START_TIMEOUT_MS[shell]);
    const check = () => {
      const m = out.match(/svc listening on (http:\/\/\S+)/);
      if (m) {
        clearTimeout(timer);
        resolveUrl(m[1]);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}:\n${out}`)));
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));

  const server: TestServer = {
    url,
    token,
    workspace: opts.env?.SVC_DEFAULT_WORKSPACE ?? 'main',
    dataDir,
    process: child,
    output: () => out,
    fetch(path, init = {}) {
      const headers = new Headers(init.headers);
      const t = init.token === undefined ? token : init.token;
      if (t !== null && !headers.has('authorization')) headers.set('authorization', `Bearer ${t}`);
      return fetch(url + path, { ...init, headers });
    },
    post(path, body) {
      return server.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
    async kill9() {
      child.kill('SIGKILL');
      await exited;
    },
  };
  return server;
}

/** Creates a script and returns its hash. */
export async function createScript(s: TestServer, path: string, language: string, content: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await s.post(`/api/w/${s.workspace}/scripts/create`, { path, language, content, ...extra });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`create ${path}: ${res.status} ${text}`);
  return text;
}

/** A person in the server's workspace: their login session's cookie and a personal token of theirs. */
export interface Member {
  cookie: string;
  token: string;
}

/** Creates a user with a password, adds them to the workspace with `role`, signs them in and makes them a token. */
export async function signUpMember(s: TestServer, username: string, role: 'admin' | 'developer' | 'operator'): Promise<Member> {
  const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const credentials = { email: `${username}@example.com`, password: `${username}-password-1` };
  const created = await s.post('/api/users/create', { username, ...credentials });
  if (created.status !== 201) throw new Error(`create user ${username}: ${created.status} ${await created.text()}`);
  const added = await s.post(`/api/w/${s.workspace}/workspaces/add_user`, { username, role });
  if (added.status !== 201) throw new Error(`add ${username}: ${added.status} ${await added.text()}`);
  const login = await s.fetch('/api/auth/login', { ...json(credentials), token: null });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
  const token = await s.fetch('/api/users/tokens/create', { ...json({ label: 'own' }), token: null, headers: { cookie, 'content-type': 'application/json' } });
  if (token.status !== 201) throw new Error(`token of ${username}: ${token.status} ${await token.text()}`);
  return { cookie, token: await token.text() };
}

/** Calls a script's sync webhook (`run_wait_result`) with a JSON body: the status and the parsed answer. */
export async function runSync(s: TestServer, path: string, body: unknown = {}): Promise<{ status: number; body: any }> {
  const res = await s.fetch(`/api/w/${s.workspace}/jobs/run_wait_result/p/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

export async function waitForJob(s: TestServer, id: string, timeoutMs = 20_000): Promise<Record<string, any>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await (await s.fetch(`/api/w/${s.workspace}/jobs_u/get/${id}`)).json();
    if (['success', 'failed', 'canceled'].includes(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} still ${job.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
