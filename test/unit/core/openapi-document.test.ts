import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../functions/core/common/errors.js';
import { buildOpenApiDocument, type RouteInfo, type RunnableInfo } from '../../../functions/core/openapi/document.js';
import { parseSelection } from '../../../functions/core/openapi/selection.js';
import type { HttpTrigger } from '../../../functions/core/triggers/http-trigger-document.js';

/**
 * The core of OpenAPI generation (issue 21 item 3), without a server: how filters select routes
 * and webhooks, and the document's details a user of a generated client relies on.
 */

const ALL = { folder_regex: '*', path_regex: '*', route_path_regex: '*' };

function refusal(body: unknown): { status: number; field: unknown } {
  try {
    parseSelection(body);
  } catch (e) {
    if (e instanceof ApiError) return { status: e.status, field: e.details?.field };
    throw e;
  }
  throw new Error('accepted');
}

function trigger(over: Partial<HttpTrigger>): HttpTrigger {
  return {
    path: 'f/shop/orders', route_path: 'orders/:id', http_method: 'post', script_path: 'f/shop/take_order', is_flow: false, is_async: false,
    authentication_method: 'none', summary: '', description: '', wrap_body: false, raw_string: false, api_key_header: null, signature_header: null,
    secret_variable: null, basic_auth_resource: null, inject_token_variable: null, permissioned_as: 'admin', permissioned_scopes: null, created_by: 'admin',
    ...over,
  };
}

const takeOrder: RunnableInfo = {
  kind: 'script', path: 'f/shop/take_order', summary: '', description: '',
  schema: { type: 'object', properties: { id: { type: 'string' }, amount: { type: 'number' }, token: { type: 'string' }, body: { type: 'array' } }, required: ['id', 'amount'] },
};

const build = (routes: RouteInfo[], webhooks: RunnableInfo[] = []) => buildOpenApiDocument({ info: undefined, serverUrl: 'https://svc.example.com/', workspaceId: 'main', routeBase: '/api/r/main', routes, webhooks }) as any;

describe('filters', () => {
  it('match whole names; * alone is anything; a route in a user space only for folder *', () => {
    const s = parseSelection({ http_route_filters: [{ folder_regex: 'sho', path_regex: '*', route_path_regex: '*' }, { folder_regex: 'ops|shop', path_regex: 'ord.*', route_path_regex: 'orders/:id' }] });
    expect(s.route('f/shop/orders', 'orders/:id')).toBe(true);
    expect(s.route('f/shop/orders', 'orders/:id/status')).toBe(false);
    expect(s.route('f/shopping/orders', 'orders/:id')).toBe(false);
    expect(s.route('u/ada/orders', 'orders/:id')).toBe(false);
    expect(parseSelection({ http_route_filters: [ALL] }).route('u/ada/orders', 'x')).toBe(true);
  });

  it('select webhooks by kind, owner kind, owner name and the rest of the path', () => {
    const s = parseSelection({ webhook_filters: [{ user_or_folder_regex: 'u', user_or_folder_regex_value: 'ada|bob', path: 'tools/.*', runnable_kind: 'script' }] });
    expect(s.webhook('script', 'u/ada/tools/resize')).toBe(true);
    expect(s.webhook('flow', 'u/ada/tools/resize')).toBe(false);
    expect(s.webhook('script', 'f/ada/tools/resize')).toBe(false);
    expect(s.webhook('script', 'u/adam/tools/resize')).toBe(false);
    expect(s.webhook('script', 'u/bob/resize')).toBe(false);
    expect(s.wantsRoutes).toBe(false);
  });

  it('refuse what is not RE2, and nothing to select, with a 400 naming the field', () => {
    expect(refusal({ webhook_filters: [{ user_or_folder_regex: '*', user_or_folder_regex_value: '(a)\\1', path: '*', runnable_kind: 'flow' }] })).toEqual({ status: 400, field: 'webhook_filters.0.user_or_folder_regex_value' });
    expect(refusal({ http_route_filters: [ALL, { ...ALL, route_path_regex: '[z-a]' }] })).toEqual({ status: 400, field: 'http_route_filters.1.route_path_regex' });
    expect(refusal({ http_route_filters: [], webhook_filters: [] })).toMatchObject({ status: 400 });
  });
});

describe('the document', () => {
  it('validates, with one scheme per header and unique operation ids', async () => {
    const doc = build(
      [
        { trigger: trigger({ path: 'f/shop/a', route_path: 'a/:id', authentication_method: 'api_key', api_key_header: 'X-Key' }), target: takeOrder },
        { trigger: trigger({ path: 'f/shop/b', route_path: 'b/:id', authentication_method: 'api_key', api_key_header: 'x-key' }), target: takeOrder },
        { trigger: trigger({ path: 'f/shop/a/b', route_path: 'c', http_method: 'get' }), target: takeOrder },
        { trigger: trigger({ path: 'f/shop/a_b', route_path: 'd', http_method: 'get' }), target: takeOrder },
      ],
      [takeOrder],
    );
    expect((await new Validator().validate(doc)).errors ?? []).toEqual([]);
    expect(doc.servers).toEqual([{ url: 'https://svc.example.com' }]);
    expect(Object.keys(doc.components.securitySchemes)).toEqual(['apiKey_X-Key', 'bearerAuth']);
    expect(doc.paths['/api/r/main/b/{id}'].post.security).toEqual([{ 'apiKey_X-Key': [] }]);
    // The GET form takes its arguments in `payload`; every run endpoint has the query switches of spec 4.3.
    const getForm = doc.paths['/api/w/main/jobs/run_wait_result/p/f/shop/take_order'].get.parameters;
    expect(getForm.map((p: any) => p.name ?? p.$ref)).toEqual(['payload', ...['wrap_body', 'raw', 'include_header', 'include_query'].map((n) => `#/components/parameters/${n}`)]);
    const ids = Object.values(doc.paths).flatMap((item: any) => Object.values(item).map((op: any) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('takes route arguments from the path, then the query for GET (never its reserved names), or the body', () => {
    const doc = build([
      { trigger: trigger({ route_path: 'orders/:id', http_method: 'get' }), target: takeOrder },
      { trigger: trigger({ route_path: 'wrapped', wrap_body: true }), target: takeOrder },
      { trigger: trigger({ route_path: 'hidden' }), target: null },
    ]);
    const get = doc.paths['/api/r/main/orders/{id}'].get;
    expect(get.parameters.map((p: any) => `${p.in}:${p.name}:${p.required}`)).toEqual(['path:id:true', 'query:amount:true', 'query:body:false']);
    // wrap_body: the whole body is the argument `body`.
    expect(doc.paths['/api/r/main/wrapped'].post.requestBody).toEqual({ required: false, content: { 'application/json': { schema: { type: 'array' } } } });
    // A script the caller may not read keeps its schema to itself.
    expect(doc.paths['/api/r/main/hidden'].post.requestBody.content['application/json'].schema).toEqual({ type: 'object' });
  });
});
