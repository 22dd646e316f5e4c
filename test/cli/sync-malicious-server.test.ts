import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, newWorkspace, runCli, useServer } from './cli-harness.js';

/**
 * Attack (issue 30): `svc sync pull` from a malicious server. Every name the server gives (a flow
 * module id, a resource type name, a script, flow or app path) becomes a file name; one that would
 * leave the sync folder (`../`, an absolute path) is refused with an error naming it, and nothing
 * is written, inside the folder or out.
 *
 * The "server" is a proxy in front of the real one that rewrites its answers as an attacker would.
 */

const server = useServer();
let ws: string;
let proxy: Server;
let proxyUrl: string;
/** How the proxy rewrites the JSON answer of a GET of the workspace API (path after /api/w/<ws>). */
let rewrite: (path: string, body: any) => any = (_p, b) => b;

beforeAll(async () => {
  const s = server();
  ws = await newWorkspace(s, 'evil');
  await api(s, ws, '/folders/create', { name: 'ops' });
  await api(s, ws, '/scripts/create', { path: 'f/ops/hello', language: 'bun', content: 'export function main() { return 1; }' });
  await api(s, ws, '/resources/type/create', { name: 'weather', schema: { type: 'object' } });
  await api(s, ws, '/flows/create', { path: 'f/ops/pipeline', value: { modules: [{ id: 'a', value: { type: 'rawscript', language: 'python3', content: 'def main():\n    return 1\n', input_transforms: {} } }] } });
  await api(s, ws, '/apps/create', { path: 'f/ops/dash', summary: 'd', value: { grid: [] } });

  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const prefix = `/api/w/${ws}`;
    let url = req.url!;
    const apiPath = url.startsWith(prefix) ? url.slice(prefix.length) : null;
    // A path the server itself made up is read as the real item it stands for.
    if (apiPath?.startsWith('/scripts/get/p/')) url = `${prefix}/scripts/get/p/f/ops/hello`;
    if (apiPath?.startsWith('/apps/get/p/')) url = `${prefix}/apps/get/p/f/ops/dash`;
    if (apiPath?.startsWith('/flows/get/')) url = `${prefix}/flows/get/f/ops/pipeline`;
    const upstream = await fetch(s.url + url, { method: req.method, headers: req.headers as Record<string, string>, body: chunks.length ? Buffer.concat(chunks) : undefined });
    let text = await upstream.text();
    if (req.method === 'GET' && apiPath !== null && upstream.ok && upstream.headers.get('content-type')?.includes('json')) text = JSON.stringify(rewrite(apiPath, JSON.parse(text)));
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'text/plain' });
    res.end(text);
  };
  proxy = createServer((req, res) => void answer(req, res));
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const address = proxy.address() as { port: number };
  proxyUrl = `http://127.0.0.1:${address.port}`;
});
afterAll(() => new Promise<void>((r) => (proxy ? proxy.close(() => r()) : r())));

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name)));
}

/** Pulls through the proxy into a project four levels below a fresh directory; returns the result and what was written. */
async function pull(): Promise<{ code: number; stderr: string; outside: string[]; inside: string[] }> {
  const base = mkdtempSync(join(tmpdir(), 'svc-evil-'));
  try {
    const dir = join(base, 'a', 'b', 'c', 'project');
    mkdirSync(dir, { recursive: true });
    const env = { SVC_CONFIG_DIR: join(base, 'config') };
    expect((await runCli(['init'], { cwd: dir, env })).code).toBe(0);
    const before = new Set(filesUnder(dir));
    const result = await runCli(['sync', 'pull', '--yes', '--base-url', proxyUrl, '--workspace-id', ws, '--token', server().token], { cwd: dir, env });
    const outside = filesUnder(base).filter((f) => !f.startsWith(join('a', 'b', 'c', 'project')) && !f.startsWith('config'));
    const inside = filesUnder(dir).filter((f) => !before.has(f) && !f.startsWith('.svc-sync'));
    return { code: result.code, stderr: result.stderr, outside, inside };
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

describe('svc sync pull from a malicious server', () => {
  it('writes the honest answer (the proxy itself is sound)', async () => {
    rewrite = (_p, b) => b;
    const r = await pull();
    expect(r.code, r.stderr).toBe(0);
    expect(r.inside).toContain(join('f', 'ops', 'hello.ts'));
  });

  const attacks: Array<[string, string, (path: string, body: any) => any]> = [
    ['a flow module id', '../../../../../escaped_module', (path, b) => (path.startsWith('/flows/get/') ? { ...b, value: { ...b.value, modules: b.value.modules.map((m: any) => ({ ...m, id: '../../../../../escaped_module' })) } } : b)],
    ['a resource type name', '../../../../escaped_type', (path, b) => (path.startsWith('/resources/type/list') ? b.map((t: any) => ({ ...t, name: '../../../../escaped_type' })) : b)],
    ['a script path', 'f/ops/../../../../../../escaped_script', (path, b) => (path === '/scripts/list' ? b.map((x: any) => ({ ...x, path: 'f/ops/../../../../../../escaped_script' })) : path.startsWith('/scripts/get/') ? { ...b, path: 'f/ops/../../../../../../escaped_script' } : b)],
    ['a flow path', '/tmp/escaped_flow', (path, b) => (path.startsWith('/flows/list') ? b.map((x: any) => ({ ...x, path: '/tmp/escaped_flow' })) : path.startsWith('/flows/get/') ? { ...b, path: '/tmp/escaped_flow' } : b)],
    ['an app path', 'u/../../../../../../escaped_app', (path, b) => (path.startsWith('/apps/list') ? b.map((x: any) => ({ ...x, path: 'u/../../../../../../escaped_app' })) : path.startsWith('/apps/get/') ? { ...b, path: 'u/../../../../../../escaped_app' } : b)],
  ];
  // Inside the folder, but where the project keeps something else: a CI workflow the user commits.
  const misplaced: Array<[string, string, (path: string, body: any) => any]> = [
    ['a resource type name', '.github/workflows/evil', (path, b) => (path.startsWith('/resources/type/list') ? b.map((t: any) => ({ ...t, name: '.github/workflows/evil' })) : b)],
    ['a script path', '.github/workflows/deploy', (path, b) => (path === '/scripts/list' ? b.map((x: any) => ({ ...x, path: '.github/workflows/deploy' })) : path.startsWith('/scripts/get/') ? { ...b, path: '.github/workflows/deploy' } : b)],
    ['a flow path', '.github/workflows/ci', (path, b) => (path.startsWith('/flows/list') ? b.map((x: any) => ({ ...x, path: '.github/workflows/ci' })) : path.startsWith('/flows/get/') ? { ...b, path: '.github/workflows/ci' } : b)],
  ];
  for (const [what, name, attack] of misplaced) {
    it(`refuses ${what} that puts a file where no such item lives (${name}), and writes nothing`, async () => {
      rewrite = attack;
      const r = await pull();
      expect(r.code, r.stderr).not.toBe(0);
      expect(r.stderr).toContain(name);
      expect(r.stderr).toMatch(/is not where .* lives/);
      expect(r.inside, what).toEqual([]);
      expect(r.outside, what).toEqual([]);
    });
  }

  for (const [what, name, attack] of attacks) {
    it(`refuses ${what} that leaves the folder, naming it, and writes nothing`, async () => {
      rewrite = attack;
      const r = await pull();
      expect(r.outside, what).toEqual([]);
      expect(r.code, r.stderr).not.toBe(0);
      expect(r.stderr).toContain(name);
      expect(r.stderr).toMatch(/outside the sync folder/);
      expect(r.inside, what).toEqual([]);
    });
  }
});

describe('svc sync pull into a folder with symbolic links', () => {
  // Attack: a cloned repository brings a link where a pull will write an item's file (the file
  // itself, or a directory on its way); the pull wrote the server's content wherever it pointed.
  for (const [what, link] of [
    ['a script file', join('f', 'ops', 'hello.ts')],
    ['a folder', 'f'],
  ] as const) {
    it(`writes nothing through ${what} that is a link, and says which`, async () => {
      rewrite = (_p, b) => b;
      const base = mkdtempSync(join(tmpdir(), 'svc-links-'));
      try {
        const dir = join(base, 'project');
        const victim = join(base, 'victim');
        mkdirSync(dir);
        mkdirSync(join(victim, 'ops'), { recursive: true });
        writeFileSync(join(victim, 'bashrc'), 'mine\n');
        const env = { SVC_CONFIG_DIR: join(base, 'config') };
        expect((await runCli(['init'], { cwd: dir, env })).code).toBe(0);
        mkdirSync(join(dir, 'f', 'ops'), { recursive: true });
        if (link === 'f') {
          rmSync(join(dir, 'f'), { recursive: true });
          symlinkSync(victim, join(dir, 'f'));
        } else {
          symlinkSync(join(victim, 'bashrc'), join(dir, link));
        }
        const r = await runCli(['sync', 'pull', '--yes', '--base-url', proxyUrl, '--workspace-id', ws, '--token', server().token], { cwd: dir, env });
        expect(r.code, r.stderr).not.toBe(0);
        expect(r.stderr).toContain(`${link} is a symbolic link`);
        expect(readFileSync(join(victim, 'bashrc'), 'utf8')).toBe('mine\n');
        expect(filesUnder(victim)).toEqual(['bashrc']);
      } finally {
        rmSync(base, { recursive: true, force: true });
      }
    });
  }
});
