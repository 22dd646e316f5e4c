import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './harness.js';

/**
 * The run list's chart library (uPlot) is served by svc itself in both shells, under a URL that
 * changes with its content, and the page's CSP allows exactly that file by its hash.
 */

let s: TestServer;
let cookie: string;

beforeAll(async () => {
  s = await startServer();
  expect((await s.post('/api/users/create', { username: 'ada', email: 'ada@example.com', password: 'ada-password' })).status).toBe(201);
  expect((await s.post(`/api/w/${s.workspace}/workspaces/add_user`, { username: 'ada', role: 'admin' })).status).toBe(201);
  const login = await s.fetch('/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'ada@example.com', password: 'ada-password' }), token: null });
  cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
});
afterAll(async () => {
  await s?.stop();
});

describe('the console chart library', () => {
  it('is loaded by the runs page from svc, allowed by its hash, and served cacheable with that content', async () => {
    const page = await (await s.fetch(`/w/${s.workspace}/runs`, { token: null, headers: { cookie } })).text();
    const tag = page.match(/<script src="([^"]+)" integrity="sha256-([^"]+)"><\/script>/);
    expect(tag, 'a library script tag').not.toBeNull();
    const [, url, hash] = tag!;
    expect(url).toMatch(/^\/console\/assets\/uplot-/);
    const csp = page.match(/http-equiv="Content-Security-Policy" content="([^"]+)"/)![1].replaceAll('&#39;', "'");
    expect(csp).toContain(`'sha256-${hash}'`);
    expect(csp).not.toMatch(/script-src[^;]*'self'/);

    const res = await s.fetch(url, { token: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(res.headers.get('cache-control')).toContain('immutable');
    const body = Buffer.from(await res.arrayBuffer());
    expect(createHash('sha256').update(body).digest('base64')).toBe(hash);
    expect(body.toString('utf8')).toContain('uPlot');
  });

  it('answers 404 for any other asset name', async () => {
    for (const name of ['uplot-0.0.0-xxxxxxxx.js', 'script-editor-xxxxxxxxxxxx.js', 'flow-editor-xxxxxxxxxxxx.js', '..%2Fpackage.json', 'nothing']) {
      expect((await s.fetch(`/console/assets/${name}`, { token: null })).status, name).toBe(404);
    }
  });
});

describe('the editors\' bundles', () => {
  // Both shells: the AWS shell serves what the API Lambda carries beside its bundle (lib/constructs/api.ts).
  it.each([
    ['script', `/w/{ws}/scripts/new`, 'script-editor', 'svcEditor'],
    ['flow', `/w/{ws}/flows/new`, 'flow-editor', 'svcFlowEditor'],
  ])('the %s editor page loads its bundle from svc, allowed by its hash, with a nonce for CodeMirror\'s styles', async (_kind, path, name, global) => {
    const res = await s.fetch(path.replace('{ws}', s.workspace), { token: null, headers: { cookie } });
    expect(res.status).toBe(200);
    const page = await res.text();
    const tag = page.match(/<script src="([^"]+)" integrity="sha256-([^"]+)"><\/script>/);
    expect(tag, 'a library script tag').not.toBeNull();
    const [, url, hash] = tag!;
    expect(url).toMatch(new RegExp(`^/console/assets/${name}-[A-Za-z0-9_=-]{12}\\.js$`));
    const csp = page.match(/http-equiv="Content-Security-Policy" content="([^"]+)"/)![1].replaceAll('&#39;', "'");
    expect(csp).toContain(`'sha256-${hash}'`);
    const nonce = page.match(/data-style-nonce="([^"]+)"/)![1];
    expect(csp).toMatch(new RegExp(`style-src [^;]*'nonce-${nonce.replace(/[+/]/g, (c) => `\\${c}`)}'`));
    const asset = await s.fetch(url, { token: null });
    expect(asset.status).toBe(200);
    const body = Buffer.from(await asset.arrayBuffer());
    expect(createHash('sha256').update(body).digest('base64')).toBe(hash);
    expect(body.toString('utf8')).toContain(global);
  });
});

describe('pages whose script is their bundles', () => {
  beforeAll(async () => {
    expect((await s.post(`/api/w/${s.workspace}/scripts/create`, { path: 'u/ada/bundled', language: 'bun', content: 'export function main() { return 1; }', summary: '' })).status).toBe(201);
  });

  // A page that is markup and bundles: the CSP allows those bundles by their hashes and no inline script.
  it.each([
    ['the flow editor', '/w/{ws}/flows/new', ['flow-editor', 'flow-editor-page']],
    ['the script editor', '/w/{ws}/scripts/new', ['script-editor', 'script-editor-page']],
    ['an item page', '/w/{ws}/item/u/ada/bundled', ['item-page']],
    ['the login page', '/login', ['login-page']],
    ['the OpenAPI page', '/w/{ws}/openapi', ['openapi-page']],
    ...['schedules', 'variables', 'resources', 'routes', 'folders', 'groups', 'members'].map((slug) => [`the ${slug} page`, `/w/{ws}/${slug}`, ['holdings-page']] as [string, string, string[]]),
  ])('%s has no inline script: its CSP allows exactly its bundles', async (_name, path, bundles) => {
    const res = await s.fetch(path.replace('{ws}', s.workspace), { token: null, headers: { cookie } });
    expect(res.status).toBe(200);
    const page = await res.text();
    const scripts = [...page.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map((m) => m[2]), 'no inline script').toEqual(bundles.map(() => ''));
    const tags = scripts.map((m) => m[1].match(/^ src="\/console\/assets\/([a-z-]+)-[A-Za-z0-9_=-]{12}\.js" integrity="sha256-([^"]+)"$/));
    expect(tags.map((t) => t?.[1])).toEqual(bundles);
    const csp = res.headers.get('content-security-policy') ?? '';
    const scriptSrc = csp.split(';').find((d) => d.trim().startsWith('script-src'))!.trim();
    expect(scriptSrc).toBe(`script-src ${tags.map((t) => `'sha256-${t![2]}'`).join(' ')}`);
    expect(csp).not.toContain('unsafe');
  });
});
