import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startServer, type TestServer } from '../http/harness.js';

/**
 * The svc CLI as a user runs it: `node bin/svc.js ...` as a child process in a temporary project
 * directory, against the real local server (test/http/harness.ts), with its config directory
 * (workspace profiles) in a temporary directory too, never the real home.
 */

const ROOT = resolve(import.meta.dirname, '../..');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Project {
  dir: string;
  configDir: string;
  write(file: string, content: string): void;
  read(file: string): string;
  exists(file: string): boolean;
  remove(file: string): void;
  /** Runs svc in the project. */
  svc(args: string[], opts?: { input?: string; env?: Record<string, string> }): Promise<CliResult>;
}

const temps: string[] = [];

export function runCli(args: string[], opts: { cwd: string; env?: Record<string, string>; input?: string }): Promise<CliResult> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/svc.js'), ...args], {
      cwd: opts.cwd,
      env: { PATH: process.env.PATH, HOME: opts.cwd, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolveRun({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

export function newProject(files: Record<string, string> = {}): Project {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cli-project-'));
  const configDir = mkdtempSync(join(tmpdir(), 'svc-cli-config-'));
  temps.push(dir, configDir);
  const project: Project = {
    dir,
    configDir,
    write(file, content) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      writeFileSync(join(dir, file), content);
    },
    read: (file) => readFileSync(join(dir, file), 'utf8'),
    exists: (file) => existsSync(join(dir, file)),
    remove: (file) => rmSync(join(dir, file), { recursive: true, force: true }),
    svc: (args, opts = {}) => runCli(args, { cwd: dir, input: opts.input, env: { SVC_CONFIG_DIR: configDir, ...opts.env } }),
  };
  for (const [f, c] of Object.entries(files)) project.write(f, c);
  return project;
}

/** One local server for the test file, started before its tests (with `env`'s variables) and stopped after. */
export function useServer(env?: () => Promise<Record<string, string>>): () => TestServer {
  let server: TestServer | undefined;
  beforeAll(async () => {
    server = await startServer(env ? { env: await env() } : {});
  });
  afterAll(async () => {
    await server?.stop();
    for (const t of temps.splice(0)) rmSync(t, { recursive: true, force: true });
  });
  return () => server!;
}

let counter = 0;

/** A fresh workspace for one test, so tests of a file do not see each other's items. */
export async function newWorkspace(s: TestServer, prefix = 'ws'): Promise<string> {
  const id = `${prefix}-${process.pid}-${++counter}`;
  const res = await s.post('/api/workspaces/create', { id, name: id });
  if (res.status !== 201) throw new Error(`create workspace ${id}: ${res.status} ${await res.text()}`);
  return id;
}

/** `--base-url/--workspace-id/--token` for the workspace, as a CI job would pass them. */
export const target = (s: TestServer, ws: string) => ['--base-url', s.url, '--workspace-id', ws, '--token', s.token];

/** POSTs to the workspace API and fails the test on an error answer. */
export async function api(s: TestServer, ws: string, path: string, body: unknown): Promise<string> {
  const res = await s.post(`/api/w/${ws}${path}`, body);
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${text}`);
  return text;
}

export async function apiGet<T = Record<string, any>>(s: TestServer, ws: string, path: string): Promise<{ status: number; body: T }> {
  const res = await s.fetch(`/api/w/${ws}${path}`);
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

/** The `changes` of a --json-output run, as `<op> <kind> <path>` lines, sorted. */
export function changesOf(result: CliResult): string[] {
  const report = JSON.parse(result.stdout) as { changes: { op: string; kind: string; path: string }[] };
  return report.changes.map((c) => `${c.op} ${c.kind} ${c.path}`).sort();
}
