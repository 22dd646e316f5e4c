import { createHmac } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import { Validator } from '@seriousme/openapi-schema-validator';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';

/**
 * The OpenAPI 3.1 document of a workspace's routes and webhooks (issue 21 item 3), in both shells:
 * it validates against the OpenAPI 3.1 schema (@seriousme/openapi-schema-validator), carries the
 * routes' path parameters, authentication and the runnables' schemas, lists only what the caller
 * may read, and a client generated from it (openapi-typescript types, typechecked, + openapi-fetch)
 * calls a signed route and a webhook of the running server. Bad filters are a 400.
 */

let s: TestServer;
let dev: string;
const ws = () => `/api/w/${s.workspace}`;
const SECRET = `whsec-${Math.random().toString(36).slice(2)}`;
const ROOT = resolve(import.meta.dirname, '../..');
const json = (body: unknown, token?: string) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), ...(token ? { token } : {}) });
const generate = (body: unknown, token?: string) => s.fetch(`${ws()}/openapi/generate`, json(body, token));
const ALL_ROUTES = { folder_regex: '*', path_regex: '*', route_path_regex: '*' };
const allWebhooks = (runnable_kind: 'script' | 'flow') => ({ user_or_folder_regex: '*', user_or_folder_regex_value: '*', path: '*', runnable_kind });

type Doc = { openapi: string; servers: { url: string }[]; paths: Record<string, Record<string, any>>; components: Record<string, any> };

async function document(body: unknown, token?: string): Promise<Doc> {
  const res = await generate(body, token);
  expect(res.status, await res.clone().text()).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return res.json();
}

async function expectValid(doc: unknown): Promise<void> {
  const result = await new Validator().validate(doc as Record<string, unknown>);
  expect(result.errors ?? [], 'OpenAPI 3.1 schema errors').toEqual([]);
  expect(result.valid).toBe(true);
  // The schema cannot see that every security requirement names a declared scheme: check it here.
  const { paths, components } = doc as Doc;
  const used = Object.values(paths).flatMap((item) => Object.values(item).flatMap((op) => (op.security ?? []).flatMap((r: object) => Object.keys(r))));
  expect(used.filter((name) => !(name in components.securitySchemes))).toEqual([]);
}

beforeAll(async () => {
  s = await startServer();
  expect((await s.post(`${ws()}/folders/create`, { name: 'shop' })).status).toBe(201);
  expect((await s.post(`${ws()}/folders/create`, { name: 'back_office' })).status).toBe(201);
  await createScript(s, 'f/shop/take_order', 'bun', 'export function main(id: string, amount: number, note = "") { return { id, amount, note }; }', {
    summary: 'Take an order',
    description: 'Books an order of `amount` items.',
  });
  await createScript(s, 'f/back_office/payroll', 'bun', 'export function main(month: string) { return month; }');
  await createScript(s, 'u/admin/private_tool', 'bun', 'export function main(x: number) { return x; }');
  const flow = { path: 'f/shop/fulfil', summary: 'Fulfil an order', value: { modules: [{ id: 'a', value: { type: 'rawscript', language: 'bun', content: 'export function main(sku: string) { return sku; }', input_transforms: { sku: { type: 'javascript', expr: 'flow_input.sku' } } } }] }, schema: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] } };
  expect((await s.post(`${ws()}/flows/create`, flow)).status).toBe(201);
  expect((await s.post(`${ws()}/variables/create`, { path: 'f/shop/order_secret', value: SECRET, is_secret: true })).status).toBe(201);
  expect((await s.post(`${ws()}/variables/create`, { path: 'f/shop/status_key', value: 'k', is_secret: true })).status).toBe(201);
  expect((await s.post(`${ws()}/variables/create`, { path: 'f/shop/proxy_token', value: s.token, is_secret: true })).status).toBe(201);
  const routes = [
    { path: 'f/shop/orders', route_path: 'orders/:id', http_method: 'post', script_path: 'f/shop/take_order', authentication_method: 'signature', secret_variable: 'f/shop/order_secret', summary: 'Place an order' },
    { path: 'f/shop/order_status', route_path: 'orders/:id/status', http_method: 'get', script_path: 'f/shop/take_order', authentication_method: 'api_key', api_key_header: 'X-Shop-Key', secret_variable: 'f/shop/status_key' },
    { path: 'f/shop/fulfilment', route_path: 'fulfil', http_method: 'put', script_path: 'f/shop/fulfil', is_flow: true, is_async: true, authentication_method: 'svc' },
    // The reverse-proxy form: anyone reaches the sync webhook, the run acts as the injected token.
    { path: 'f/shop/proxy', route_path: 'hooks/orders', http_method: 'post', script_path: 'f/shop/take_order', authentication_method: 'none', inject_token_variable: 'f/shop/proxy_token' },
    { path: 'f/back_office/open', route_path: 'payroll/:month', http_method: 'post', script_path: 'f/back_office/payroll', authentication_method: 'none' },
  ];
  for (const r of routes) {
    const res = await s.post(`${ws()}/http_triggers/create`, r);
    expect(res.status, await res.text()).toBe(201);
  }
  // dev may read (not write) the shop folder and nothing else of the admin's.
  expect((await s.post(`${ws()}/folders/update/shop`, { extra_perms: { 'u/dev': false } })).status).toBe(200);
  expect((await s.post('/api/users/create', { username: 'dev', email: 'dev@example.com', password: 'dev-password-1' })).status).toBe(201);
  expect((await s.post(`${ws()}/workspaces/add_user`, { username: 'dev', role: 'developer' })).status).toBe(201);
  const login = await s.fetch('/api/auth/login', { ...json({ email: 'dev@example.com', password: 'dev-password-1' }), token: null });
  const cookie = login.headers.get('set-cookie')!.split(';')[0];
  dev = await (await s.fetch('/api/users/tokens/create', { ...json({ label: 'dev' }), token: null, headers: { cookie, 'content-type': 'application/json', origin: s.url } })).text();
});
afterAll(() => s?.stop());

describe('the generated document', () => {
  it('validates as OpenAPI 3.1 and covers the selected routes and webhooks', async () => {
    const doc = await document({ info: { title: 'Shop API', version: '2.1.0' }, http_route_filters: [ALL_ROUTES], webhook_filters: [allWebhooks('script'), allWebhooks('flow')] });
    await expectValid(doc);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([{ url: s.url }]);
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/api/r/')).sort()).toEqual(['/api/r/main/fulfil', '/api/r/main/hooks/orders', '/api/r/main/orders/{id}', '/api/r/main/orders/{id}/status', '/api/r/main/payroll/{month}']);

    const order = doc.paths['/api/r/main/orders/{id}'].post;
    expect(order.summary).toBe('Place an order');
    expect(order.parameters).toEqual([{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }]);
    // The path supplies id: the body needs only amount.
    const orderBody = order.requestBody.content['application/json'].schema;
    expect(orderBody.required).toEqual(['amount']);
    expect(orderBody.properties.amount).toMatchObject({ type: 'number' });
    expect(orderBody.properties.id).toBeUndefined();
    expect(order.security).toEqual([{ 'signature_X-Signature': [] }]);
    expect(doc.components.securitySchemes['signature_X-Signature']).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Signature' });
    expect(Object.keys(order.responses)).toContain('200');

    const status = doc.paths['/api/r/main/orders/{id}/status'].get;
    expect(status.requestBody).toBeUndefined();
    expect(status.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(['path:id', 'query:amount', 'query:note']);
    expect(status.security).toEqual([{ 'apiKey_X-Shop-Key': [] }]);
    expect(doc.components.securitySchemes['apiKey_X-Shop-Key']).toEqual(expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-Shop-Key' }));

    const fulfil = doc.paths['/api/r/main/fulfil'].put;
    expect(fulfil.security).toEqual([{ bearerAuth: [] }]);
    expect(fulfil.responses['201'].content['text/plain']).toBeDefined();
    expect(fulfil.requestBody.content['application/json'].schema).toEqual({ type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] });
    expect(doc.paths['/api/r/main/payroll/{month}'].post.security).toEqual([]);

    // Webhooks: async, sync (POST, and GET for scripts) and stream, all on the JWT Bearer scheme.
    const base = `/api/w/${s.workspace}/jobs`;
    const script = 'f/shop/take_order';
    expect(doc.paths[`${base}/run/p/${script}`].post.responses['201']).toBeDefined();
    expect(Object.keys(doc.paths[`${base}/run_wait_result/p/${script}`]).sort()).toEqual(['get', 'post']);
    expect(doc.paths[`${base}/run_and_stream/p/${script}`].post.responses['200'].content['text/event-stream']).toBeDefined();
    const sync = doc.paths[`${base}/run_wait_result/p/${script}`].post;
    expect(sync).toMatchObject({ summary: 'Take an order', description: 'Books an order of `amount` items.', security: [{ bearerAuth: [] }] });
    expect(sync.requestBody.content['application/json'].schema.required).toEqual(['id', 'amount']);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(Object.keys(doc.paths[`${base}/run_wait_result/p/f/shop/fulfil`])).toEqual(['post']);
    expect(doc.paths[`${base}/run/p/f/shop/fulfil`].post.summary).toBe('Fulfil an order');
    expect(doc.paths[`${base}/run/p/u/admin/private_tool`]).toBeDefined();
  });

  it('selects by folder, item path and route path with regular expressions', async () => {
    const doc = await document({ http_route_filters: [{ folder_regex: 'shop', path_regex: 'order.*', route_path_regex: 'orders/.*' }] });
    expect(Object.keys(doc.paths).sort()).toEqual(['/api/r/main/orders/{id}', '/api/r/main/orders/{id}/status']);
    const flowsOnly = await document({ webhook_filters: [{ user_or_folder_regex: 'f', user_or_folder_regex_value: 'sh.p', path: '*', runnable_kind: 'flow' }] });
    expect(Object.keys(flowsOnly.paths).every((p) => p.endsWith('/p/f/shop/fulfil'))).toBe(true);
    const usersOnly = await document({ webhook_filters: [{ user_or_folder_regex: 'u', user_or_folder_regex_value: 'admin', path: 'private_.*', runnable_kind: 'script' }] });
    expect(Object.keys(usersOnly.paths).every((p) => p.endsWith('/p/u/admin/private_tool'))).toBe(true);
    expect(Object.keys(usersOnly.components.securitySchemes)).toEqual(['bearerAuth']);
  });

  it('as YAML, through the yaml library, is the same document', async () => {
    const body = { http_route_filters: [ALL_ROUTES], webhook_filters: [allWebhooks('script')] };
    const res = await generate({ ...body, format: 'yaml' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/yaml/);
    const text = await res.text();
    expect(text).toMatch(/^openapi: 3\.1\.0$/m);
    const fromYaml = parseYaml(text);
    await expectValid(fromYaml);
    expect(fromYaml).toEqual(await document(body));
  });

  it('lists only what the caller may read', async () => {
    const doc = await document({ http_route_filters: [ALL_ROUTES], webhook_filters: [allWebhooks('script'), allWebhooks('flow')] }, dev);
    await expectValid(doc);
    const paths = Object.keys(doc.paths);
    expect(paths.filter((p) => p.startsWith('/api/r/')).sort()).toEqual(['/api/r/main/fulfil', '/api/r/main/hooks/orders', '/api/r/main/orders/{id}', '/api/r/main/orders/{id}/status']);
    expect(paths.some((p) => p.includes('back_office') || p.includes('payroll') || p.includes('private_tool'))).toBe(false);
    expect(paths.some((p) => p.endsWith('/p/f/shop/take_order'))).toBe(true);
    // Nothing dev may read matches: a 404, not an empty document of someone else's names.
    const none = await generate({ webhook_filters: [{ user_or_folder_regex: 'u', user_or_folder_regex_value: 'admin', path: '*', runnable_kind: 'script' }] }, dev);
    expect(none.status).toBe(404);
    expect(JSON.stringify(await none.json())).not.toContain('private_tool');
  });
});

describe('bad input', () => {
  it.each([
    ['a bad regular expression', { http_route_filters: [{ ...ALL_ROUTES, path_regex: 'orders(' }] }, 'http_route_filters.0.path_regex'],
    ['a look-ahead (not RE2)', { webhook_filters: [{ ...allWebhooks('script'), path: '(?=x)' }] }, 'webhook_filters.0.path'],
    ['an owner kind that is not *, u or f', { webhook_filters: [{ ...allWebhooks('script'), user_or_folder_regex: 'g' }] }, 'webhook_filters.0.user_or_folder_regex'],
    ['a runnable kind that is not script or flow', { webhook_filters: [{ ...allWebhooks('script'), runnable_kind: 'app' }] }, 'webhook_filters.0.runnable_kind'],
    ['an empty pattern', { http_route_filters: [{ ...ALL_ROUTES, folder_regex: '' }] }, 'http_route_filters.0.folder_regex'],
    ['an unknown field in a filter', { http_route_filters: [{ ...ALL_ROUTES, method: 'get' }] }, 'http_route_filters.0.method'],
    ['no filter at all', {}, 'http_route_filters'],
    ['a format that is not json or yaml', { format: 'xml', http_route_filters: [ALL_ROUTES] }, 'format'],
    ['a server URL that is not http(s)', { url: 'javascript:alert(1)', http_route_filters: [ALL_ROUTES] }, 'url'],
    ['info without a version', { info: { title: 'x' }, http_route_filters: [ALL_ROUTES] }, 'info.version'],
  ])('%s is a 400 naming the field', async (_what, body, field) => {
    const res = await generate(body);
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ code: 'invalid_request', field });
  });

  it('is JSON only (415) and needs a token (401)', async () => {
    expect((await s.fetch(`${ws()}/openapi/generate`, { method: 'POST', body: 'format: yaml' })).status).toBe(415);
    expect((await s.fetch(`${ws()}/openapi/generate`, { ...json({ http_route_filters: [ALL_ROUTES] }), token: null })).status).toBe(401);
  });
});

describe('a client generated from the document', () => {
  it('calls a signed route, a proxy route and a webhook of the running server (openapi-typescript + openapi-fetch)', async () => {
    const doc = await document({ http_route_filters: [{ folder_regex: 'shop', path_regex: '*', route_path_regex: '*' }], webhook_filters: [allWebhooks('script')] });
    const dir = join(ROOT, 'node_modules/.cache/svc', `openapi-client-${process.env.SVC_TEST_SHELL ?? 'local'}-${process.pid}`);
    await mkdir(dir, { recursive: true });
    try {
      await writeFile(join(dir, 'api.ts'), astToString(await openapiTS(doc as unknown as OpenAPI3, { silent: true })));
      const source = clientSource(s.workspace);
      await writeFile(join(dir, 'client.ts'), source);
      expect(typeErrors(join(dir, 'client.ts')), 'the generated types and the client disagree').toEqual([]);
      await writeFile(join(dir, 'client.mjs'), ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText);
      const client = await import(pathToFileURL(join(dir, 'client.mjs')).href);

      const sign = (body: string) => `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
      const route = await client.placeOrder(doc.servers[0].url, '42', sign);
      expect(route).toEqual({ status: 200, data: { id: '42', amount: 5, note: 'rush' } });
      const wrong = await client.placeOrder(doc.servers[0].url, '42', () => 'sha256=00');
      expect(wrong.status).toBe(401);
      expect(await client.proxiedOrder(doc.servers[0].url)).toEqual({ status: 200, data: { id: 'p1', amount: 7, note: '' } });

      const webhook = await client.takeOrder(doc.servers[0].url, s.token);
      expect(webhook.sync).toEqual({ status: 200, data: { id: 'w1', amount: 3, note: '' } });
      expect(webhook.async.status).toBe(201);
      expect(await waitForJob(s, webhook.async.data)).toMatchObject({ status: 'success', result: { id: 'w2', amount: 4, note: '' } });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

/** What a user writes against the generated `paths`; the compiler checks it against them. */
function clientSource(workspace: string): string {
  return `import createClient from 'openapi-fetch';
import type { paths } from './api';

export async function placeOrder(baseUrl: string, id: string, sign: (body: string) => string) {
  const client = createClient<paths>({ baseUrl });
  const body = { amount: 5, note: 'rush' };
  // openapi-fetch sends JSON.stringify(body): the signature covers exactly those bytes.
  const { data, response } = await client.POST('/api/r/main/orders/{id}', { params: { path: { id } }, body, headers: { 'x-signature': sign(JSON.stringify(body)) } });
  return response.ok ? { status: response.status, data } : { status: response.status };
}

export async function proxiedOrder(baseUrl: string) {
  const client = createClient<paths>({ baseUrl });
  const { data, response } = await client.POST('/api/r/main/hooks/orders', { body: { id: 'p1', amount: 7 } });
  return { status: response.status, data };
}

export async function takeOrder(baseUrl: string, token: string) {
  const client = createClient<paths>({ baseUrl, headers: { authorization: 'Bearer ' + token } });
  // @ts-expect-error amount is a number in take_order's schema: the generated types must refuse a string.
  void (() => client.POST('/api/w/${workspace}/jobs/run_wait_result/p/f/shop/take_order', { body: { id: 'x', amount: 'three' } }));
  const sync = await client.POST('/api/w/${workspace}/jobs/run_wait_result/p/f/shop/take_order', { body: { id: 'w1', amount: 3 } });
  const queued = await client.POST('/api/w/${workspace}/jobs/run/p/f/shop/take_order', { body: { id: 'w2', amount: 4 }, parseAs: 'text' });
  return { sync: { status: sync.response.status, data: sync.data }, async: { status: queued.response.status, data: queued.data } };
}
`;
}

function typeErrors(file: string): string[] {
  const program = ts.createProgram([file], { strict: true, noEmit: true, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, target: ts.ScriptTarget.ES2022, lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'], types: [], skipLibCheck: true });
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}
