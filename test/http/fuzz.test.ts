import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, type TestServer } from './harness.js';

/**
 * Issue 15: a few thousand generated requests over every public route — malformed and oddly
 * encoded bodies, huge and deep payloads, bodies shaped like a route's request schema but with
 * wrong types, unknown fields or missing required ones, odd methods, paths and headers — and not
 * one 5xx; the server keeps answering throughout. The API routes are those of the served OpenAPI
 * document (GET /api/openapi.json), so a route added to the catalog is fuzzed without a change
 * here; the console pages and the workspace's own routes, which it does not describe, are listed
 * below. Seeded, so a failure names a request that can be replayed (SVC_FUZZ_SEED, and
 * SVC_FUZZ_VERBOSE=1 for the bodies and the server's output).
 */
const SEED = Number(process.env.SVC_FUZZ_SEED ?? 15);
// Every route gets two requests first; the rest are picked at random. More with SVC_FUZZ_REQUESTS when hunting.
const REQUESTS = Number(process.env.SVC_FUZZ_REQUESTS ?? 1500);
const VERBOSE = Boolean(process.env.SVC_FUZZ_VERBOSE);
const IN_FLIGHT = 8;
const MAX_BODY = 64 * 1024;
const SYNC_WAIT_SECONDS = 10;

/** The parts of a JSON Schema (as the document's zod schemas become) that the generator reads. */
interface Schema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  maxItems?: number;
}
interface Parameter { name: string; in: string; schema?: Schema }
interface Operation { parameters?: Parameter[]; requestBody?: { content?: Record<string, { schema?: Schema }> } }
interface ApiDocument { paths: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, Schema> } }
interface Route { method: string; template: string; query: Parameter[]; body?: Schema }

/**
 * Served but not operations of the document: the console's pages (GET; a session or a token) and
 * the workspace's own HTTP routes under /api/r/ (which POST /api/w/{workspace}/openapi/generate
 * describes); `route` is filled to hit the triggers beforeAll makes.
 */
const PAGES = [
  'GET /', 'GET /login', 'GET /tokens', 'GET /approvals', 'GET /openapi', 'GET /console/assets/{name}', 'GET /approve/{workspace}/{job}/{resumeId}/{signature}',
  'GET /w/{workspace}', 'GET /w/{workspace}/settings', 'GET /w/{workspace}/openapi', 'GET /w/{workspace}/runs', 'GET /w/{workspace}/run/{id}',
  'GET /w/{workspace}/run/{id}/logs', 'GET /w/{workspace}/run/{id}/subflows', 'GET /w/{workspace}/run/{id}/approval', 'GET /w/{workspace}/item/{path}',
  'GET /w/{workspace}/scripts/new', 'GET /w/{workspace}/scripts/edit/{path}', 'GET /w/{workspace}/flows/new', 'GET /w/{workspace}/flows/edit/{path}',
  'GET /w/{workspace}/schedules', 'GET /w/{workspace}/variables', 'GET /w/{workspace}/resources', 'GET /w/{workspace}/routes', 'GET /w/{workspace}/folders',
  'GET /w/{workspace}/groups', 'GET /w/{workspace}/members', 'GET /api/r/{workspace}/{route}', 'POST /api/r/{workspace}/{route}', 'PUT /api/r/{workspace}/{route}', 'DELETE /api/r/{workspace}/{route}',
];

let s: TestServer;
let doc: ApiDocument;
let routes: Route[];
/** Things that exist on the server, so some requests get past "not found". */
const known = { jobId: '', hash: '', stepJob: '', signature: '', cookie: '' };

beforeAll(async () => {
  // A run that outlasts a sync endpoint's wait (a generated flow that suspends, say) is answered
  // 504 sync_wait_timeout, as documented, before the client here gives up.
  s = await startServer({ env: { SVC_MAX_BODY_BYTES: String(MAX_BODY), SVC_SYNC_MAX_WAIT_SECONDS: String(SYNC_WAIT_SECONDS) } });
  known.hash = await createScript(s, 'f/fuzz/echo', 'bun', 'export function main(a, b) { return { a, b }; }');
  const run = await s.fetch('/api/w/main/jobs/run/p/f/fuzz/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
  known.jobId = await run.text();
  // The workspace's own routes: one open, one that wants a signature, one a key (the secret's variable first).
  expect((await s.post('/api/w/main/variables/create', { path: 'f/fuzz/secret', value: 's3cret', is_secret: true })).status).toBe(201);
  for (const [path, auth] of [['f/fuzz/route', { authentication_method: 'none' }], ['f/fuzz/signed', { authentication_method: 'signature', secret_variable: 'f/fuzz/secret' }], ['f/fuzz/keyed', { authentication_method: 'api_key', api_key_header: 'x-api-key', secret_variable: 'f/fuzz/secret' }]] as const) {
    const route = await s.post('/api/w/main/http_triggers/create', { path, route_path: `${path.split('/')[2]}/:id`, http_method: 'post', script_path: 'f/fuzz/echo', ...auth });
    expect(route.status, await route.clone().text()).toBe(201);
  }
  await suspendedStep();
  // The console's pages need a session (a token gets a redirect to /login): an admin of main's.
  expect((await s.post('/api/users/create', { username: 'pages', email: 'pages@example.com', password: 'pages-password-1' })).status).toBe(201);
  expect((await s.post('/api/w/main/workspaces/add_user', { username: 'pages', role: 'admin' })).status).toBe(201);
  const login = await s.fetch('/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'pages@example.com', password: 'pages-password-1' }), token: null });
  expect(login.status).toBe(200);
  known.cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
  const res = await s.fetch('/api/openapi.json', { token: null });
  expect(res.status).toBe(200);
  doc = (await res.json()) as ApiDocument;
  routes = [
    ...Object.entries(doc.paths).flatMap(([template, operations]) =>
      Object.entries(operations).map(([method, op]): Route => {
        const content = op.requestBody?.content ?? {};
        return { method: method.toUpperCase(), template, query: (op.parameters ?? []).filter((p) => p.in === 'query'), body: content['application/json']?.schema };
      }),
    ),
    ...PAGES.map((line): Route => {
      const [method, template] = line.split(' ');
      // The runs page takes the filters of the runs API.
      const like = template === '/w/{workspace}/runs' ? doc.paths['/api/w/{workspace}/jobs/runs']?.get : undefined;
      return { method, template, query: (like?.parameters ?? []).filter((p) => p.in === 'query') };
    }),
  ];
  // The document describes the whole API (test/unit/in-process/api-openapi.test.ts): if it came back
  // nearly empty, this would fuzz next to nothing.
  expect(routes.length).toBeGreaterThan(150);
});

/**
 * A flow waiting at an approval step (a hundred approvals, so the fuzz cannot finish it), whose step
 * job and resume signature the fillers use: the resume, cancel and approval-page routes get past
 * the signature check to the form and the step's rules.
 */
async function suspendedStep() {
  // Flow version 1, which the fillers name, is a quick one: this flow, which waits, is version 2.
  const quick = await s.post('/api/w/main/flows/create', { path: 'f/fuzz/quick', value: { modules: [{ id: 'a', value: { type: 'identity' } }] } });
  expect(quick.status, await quick.clone().text()).toBe(201);
  const ask = { id: 'ask', value: { type: 'rawscript', language: 'bun', content: 'export function main() { return 1 }', input_transforms: {} }, suspend: { required_events: 100, resume_form: { schema: { properties: { reason: { type: 'string' } }, required: ['reason'] } } } };
  const flow = await s.post('/api/w/main/flows/create', { path: 'f/fuzz/approval', value: { modules: [ask, { id: 'after', value: { type: 'identity' } }] } });
  expect(flow.status, await flow.clone().text()).toBe(201);
  const id = await (await s.fetch('/api/w/main/jobs/run/f/f/fuzz/approval', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).text();
  const deadline = Date.now() + 30_000;
  for (;;) {
    const job = await (await s.fetch(`/api/w/main/jobs_u/get/${id}`)).json();
    if (job.status === 'suspended') {
      known.stepJob = job.flow_status.suspend.step_job;
      break;
    }
    if (Date.now() > deadline) throw new Error(`the approval flow is ${job.status}, not suspended`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const urls = await (await s.fetch(`/api/w/main/jobs/resume_urls/${known.stepJob}/0`)).json();
  known.signature = String(urls.resume).split('/').at(-1)!;
}

afterAll(() => s?.stop());

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
function prng(seed: number) {
  let t = seed >>> 0;
  const next = () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)];
  return { next, int, pick };
}
type Rng = ReturnType<typeof prng>;

const ODD_METHODS = ['PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'PROPFIND', 'TRACE-X', 'get'];
const ODD_SEGMENTS = ['', '..', '%2e%2e', '%00', '%ff%fe', '%', '%zz', 'é', '☃', 'a'.repeat(3000), '{}', '<script>', "'", ' ', '%0d%0aX-Injected:1', 'f/fuzz/echo', 'u/admin/x'];
const CONTENT_TYPES = [
  'application/json', 'application/json; charset=utf-16', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data',
  'multipart/form-data; boundary=', 'multipart/form-data; boundary=zz', 'application/cloudevents+json', 'application/cloudevents-batch+json',
  'application/octet-stream', 'text/html; charset=x-unknown', '*/*', ';;;', 'application/merge-patch+json', '',
];

function value(r: Rng, depth = 0): unknown {
  switch (r.int(depth > 3 ? 4 : 7)) {
    case 0: return r.pick(ODD_SEGMENTS);
    case 1: return r.pick([0, -1, 1e308, 2 ** 53 + 1, 0.5, NaN]);
    case 2: return r.pick([true, false, null]);
    case 3: return 'x'.repeat(r.int(200));
    case 4: return Array.from({ length: r.int(4) }, () => value(r, depth + 1));
    default: return Object.fromEntries(Array.from({ length: r.int(5) }, () => [r.pick(['path', 'content', 'language', 'value', 'email', 'password', 'name', 'username', 'label', 'modules', 'schema', 'is_secret', 'a', '__proto__', 'constructor', 'webhook', 'url', 'secret', 'workspace_id', 'role']), value(r, depth + 1)]));
  }
}

function body(r: Rng, contentType: string): BodyInit | undefined {
  switch (r.int(11)) {
    case 0: return undefined;
    case 1: return JSON.stringify(value(r));
    case 2: {
      const levels = 65 + r.int(6000);
      return r.int(2) ? '{"a":'.repeat(levels) + '1' + '}'.repeat(levels) : '['.repeat(levels) + ']'.repeat(r.int(4) ? levels : 3);
    }
    case 3: return new Uint8Array(Array.from({ length: r.int(300) }, () => r.int(256)));
    case 4: return 'x'.repeat(MAX_BODY + 1 + r.int(1000));
    case 5: return `--zz\r\nContent-Disposition: form-data; name="a"; filename="${r.pick(ODD_SEGMENTS)}"\r\n\r\n${'y'.repeat(r.int(50))}\r\n${r.int(2) ? '--zz--\r\n' : ''}`;
    case 6: return `a=${r.pick(ODD_SEGMENTS)}&a=%&b[]=1&=&&`;
    case 7: return JSON.stringify({ specversion: r.pick(['1.0', '0.3', 1]), id: value(r), source: 'x', type: 't', data: value(r), data_base64: r.pick(['!!', 'eyJhIjox']) });
    case 8: return '\ufeff{"a":1}';
    case 9: return new Uint8Array([0xef, 0xbb, 0xbf, 0xc3, 0x28, 0xa0, 0xa1, 0xf0, 0x28, 0x8c, 0x28]);
    default: return contentType.startsWith('application/json') ? '{"a":1,' : `a=1&b=${'%'.repeat(r.int(5))}`;
  }
}

/** Strings no client should send in a JSON body: control characters, a lone surrogate, a lot of one. */
const ODD_STRINGS = [...ODD_SEGMENTS, '\u0000', 'a\u0000b', '\ud800', '\u202e', '\r\n', 'x'.repeat(20_000), '0', '-1', 'null', '__proto__', '${x}', '{{x}}', 'f/fuzz/echo\u0000'];

/** Values for path parameters, by name; any other name gets ODD_SEGMENTS or a plain word. */
const ITEM_PATHS = ['f/fuzz/echo', 'f/fuzz/route', 'f/fuzz/signed', 'f/fuzz/a', 'f/fuzz/b', 'f/fuzz/x_1', 'u/admin/z', 'f/fuzz/x', 'f/a/b/c', 'f/fuzz'];
const ID = (r: Rng) => r.pick([known.jobId, known.stepJob, known.stepJob, '00000000-0000-0000-0000-000000000000', 'not-a-uuid', '1', '%ff', crypto.randomUUID(), ...ODD_SEGMENTS]);
const PATH_FILLERS: Record<string, (r: Rng) => string> = {
  workspace: (r) => (r.int(8) ? 'main' : r.pick(['nope', '%00', '..', 'MAIN', 'admins'])),
  path: (r) => (r.int(2) ? r.pick(ITEM_PATHS) : r.pick(ODD_SEGMENTS)),
  id: ID,
  job: (r) => (r.int(2) ? known.stepJob : ID(r)),
  run_id: ID,
  version: (r) => r.pick(['1', '0', '-1', '99999999999999999999', ...ODD_SEGMENTS]),
  hash: (r) => r.pick([known.hash, '0123456789abcdef', ...ODD_SEGMENTS]),
  resumeId: (r) => (r.int(2) ? '0' : r.pick(['1', '-1', '4294967296', '1.5', ...ODD_SEGMENTS])),
  signature: (r) => (r.int(2) ? known.signature : r.pick(['0'.repeat(64), 'deadbeef', ...ODD_SEGMENTS])),
  route: (r) => r.pick(['route/1', 'route/%00', 'signed/1', 'keyed/1', 'route', 'nope/1', ...ODD_SEGMENTS]),
};
const pathFiller = (name: string) => PATH_FILLERS[name] ?? ((r: Rng) => (r.int(3) ? r.pick(ODD_SEGMENTS) : r.pick(['admin', 'fuzz', 'main'])));

/**
 * Values for string fields of a request body, by property name: mostly ones the service accepts
 * (so a request gets past validation into the code behind it), some it must refuse.
 */
const STRING_FILLERS: Record<string, (r: Rng) => string> = {
  path: (r) => r.pick([`f/fuzz/${r.pick(['a', 'b', 'x_1', 'echo'])}`, 'u/admin/z', 'f/nofolder/q', '', '/abs', 'f/fuzz/../x', 'u/admin']),
  script_path: (r) => r.pick(['f/fuzz/echo', 'f/fuzz/none', 'u/admin/z', '']),
  schedule: (r) => r.pick(['0 0 1 1 *', '0 0 0 1 1 *', '*/30 * * * *', 'not cron', '* * * * * * * *', '99 99 * * *', '@yearly']),
  timezone: (r) => r.pick(['UTC', 'Europe/Paris', 'Mars/Olympus', '', 'utc']),
  content: (r) => r.pick(['export function main(a) { return a }', 'echo hi', 'def main():\n  return 1', '', 'syntax error (((', 'export function main() { throw new Error("x") }']),
  language: (r) => r.pick(['bun', 'bash', 'python3', 'deno', 'nativets', 'cobol']),
  route_path: (r) => r.pick(['fuzz/:id', 'fuzz2/:a/:a', 'fuzz3', '/', '..', ':id', 'a'.repeat(300), 'fuzz/*']),
  http_method: (r) => r.pick(['get', 'post', 'put', 'delete', 'patch', 'GET', 'connect']),
  webhook: (r) => r.pick(['http://127.0.0.1:9/x', 'https://192.0.2.1/', 'ftp://x', 'javascript:alert(1)', 'http://[::1]:0/', '']),
  url: (r) => r.pick(['http://127.0.0.1:9/x', 'https://192.0.2.1/', 'not a url']),
  email: (r) => r.pick(['a@example.com', 'nope', '', 'a@b']),
  username: (r) => r.pick(['admin', 'fuzz', 'nobody', '', 'ADMIN']),
  workspace: (r) => r.pick(['main', 'fuzz_ws', 'nope', '']),
  workspace_id: (r) => r.pick(['main', 'fuzz_ws', 'nope', '']),
  id: (r) => r.pick(['main', 'fuzz_ws', 'a', known.jobId, '']),
  name: (r) => r.pick(['fuzz', 'admin', 'all', 'x'.repeat(200), '']),
  role: (r) => r.pick(['admin', 'developer', 'operator', 'god']),
  prefix: (r) => r.pick(['fuzzp', '', 'api', '..', 'a/b']),
  file_key: (r) => r.pick(['x', '../../etc/passwd', 'uploads/x', '']),
  secret: (r) => r.pick(['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'short', '']),
  resource_type: (r) => r.pick(['fuzz', 'nope', '']),
};

/** Something of another type than the schema asks for. */
function wrongType(r: Rng, schema: Schema): unknown {
  const types = [schema.type].flat();
  const candidates: [string, unknown][] = [['string', 'x'], ['integer', 7], ['number', 1.5], ['boolean', true], ['null', null], ['array', [1]], ['object', { a: 1 }]];
  return r.pick(candidates.filter(([t]) => !types.includes(t)))[1];
}

/**
 * A value shaped like `schema`. When `bad`, at each level now and then one of the wrong type, out of
 * range, without a required field, or with a field it does not know; otherwise one it allows,
 * mostly (its strings come from STRING_FILLERS, some of which the service refuses).
 */
function instance(r: Rng, input: Schema | undefined, bad: boolean, depth = 0, key = ''): unknown {
  let schema = input;
  for (let hops = 0; schema?.$ref && hops < 5; hops++) schema = doc.components?.schemas?.[schema.$ref.split('/').pop()!];
  if (!schema || depth > 7) return r.pick([null, {}, 'x']);
  if (bad && r.int(25) === 0) return wrongType(r, schema);
  if ('const' in schema) return !bad || r.int(20) ? schema.const : 'not-the-const';
  if (schema.enum) return !bad || r.int(15) ? r.pick(schema.enum) : r.pick(['NOPE', '', 0]);
  const choices = schema.anyOf ?? schema.oneOf;
  if (choices) return instance(r, r.pick(choices), bad, depth + 1, key);
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map((part) => instance(r, part, bad, depth + 1, key)).filter((v) => v && typeof v === 'object'));
  const type = Array.isArray(schema.type) ? r.pick(schema.type) : schema.type;
  switch (type) {
    case 'string': {
      if (bad && schema.maxLength !== undefined && schema.maxLength < 60_000 && r.int(15) === 0) return 'y'.repeat(schema.maxLength + 1);
      if (STRING_FILLERS[key] && (!bad || r.int(5))) return STRING_FILLERS[key](r);
      return r.int(4) ? `${key || 's'}${r.int(3)}` : r.pick(ODD_STRINGS);
    }
    case 'integer':
    case 'number': {
      const min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 0);
      const max = Math.min(schema.maximum ?? 1000, min + 1000);
      switch (bad ? r.int(12) : 3) {
        case 0: return min - 1;
        case 1: return (schema.maximum ?? 2 ** 53) + 1;
        case 2: return r.pick([0.5, -0, 1e308, -1e308, 2 ** 53 + 1]);
        default: return min + r.int(Math.max(1, max - min));
      }
    }
    case 'boolean': return r.int(2) === 0;
    case 'null': return null;
    case 'array': {
      const n = bad && schema.maxItems !== undefined && schema.maxItems < 2000 && r.int(20) === 0 ? schema.maxItems + 1 : r.int(4);
      return Array.from({ length: n }, () => instance(r, schema.items, bad, depth + 1, key));
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      const required = new Set(schema.required ?? []);
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        if (required.has(name) ? bad && r.int(10) === 0 : r.int(2) === 0) continue;
        out[name] = instance(r, property, bad, depth + 1, name);
      }
      if (schema.additionalProperties && r.int(3) === 0) {
        const extra = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : {};
        for (let i = r.int(3); i >= 0; i--) out[r.pick(['a', 'b', '', '__proto__', 'constructor', 'x.y', 'é'])] = instance(r, extra, bad, depth + 1);
      }
      if (bad && r.int(8) === 0) out[r.pick(['unknown_field', '__proto__', 'constructor', 'workspace_id', 'created_by'])] = value(r, 3);
      return out;
    }
    default:
      return value(r, Math.max(depth, 2));
  }
}

/** A value for a query parameter the document declares: one its schema allows, or not. */
function queryValue(r: Rng, p: Parameter): string {
  if (r.int(4) === 0) return r.pick(ODD_SEGMENTS);
  const v = instance(r, p.schema, r.int(3) === 0, 4, p.name);
  return typeof v === 'string' ? v : JSON.stringify(v) ?? '';
}

/** Routes that delete or archive what they name leave the scripts beforeAll made alone, which most run requests need. */
const PROTECTED = new Set(['f/fuzz/echo', 'f/fuzz/route', 'f/fuzz/signed']);

/** encodeURIComponent, which throws on a lone surrogate (a URL cannot carry one): sent as U+FFFD. */
const encodeQuery = (v: string) => encodeURIComponent(v.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'));

function path(r: Rng, route: Route): string {
  const destructive = route.method === 'DELETE' || /\/(delete|archive)\//.test(route.template);
  let p = route.template.replace(/\{(\w+)\}/g, (_, k: string) => {
    const v = pathFiller(k)(r);
    return destructive && PROTECTED.has(v) ? 'f/fuzz/x' : v;
  });
  if (r.int(10) === 0) p += r.pick(['/', '//x', '/..', '?', '#frag', '/%2F']);
  const query: string[] = [];
  if (route.query.length && r.int(2) === 0) {
    for (const q of route.query) if (r.int(2) === 0) query.push(`${q.name}=${encodeQuery(queryValue(r, q))}`);
  }
  if (r.int(3) === 0) {
    const odd = [['payload', r.pick(['!!!', Buffer.from('['.repeat(5000)).toString('base64url'), Buffer.from(JSON.stringify(value(r))).toString('base64url')])],
      ['raw', 'true'], ['wrap_body', r.pick(['true', 'yes'])], ['include_header', r.pick(['Authorization', 'cookie,x-a', '', ','])],
      ['include_query', 'token,payload'], ['stream_offset', r.pick(['-1', 'abc', '99999999999999999999'])], ['token', r.pick(['junk', ''])],
      ['per_page', r.pick(['-1', '0', '1e9', 'abc'])], ['cursor', r.pick(['!!', 'eyJ9', ''])], ['log_offset', r.pick(['-1', 'NaN'])]];
    for (let i = 1 + r.int(3); i > 0; i--) {
      const [k, v] = r.pick(odd);
      query.push(`${k}=${encodeQuery(v)}`);
    }
  }
  return query.length ? `${p}?${query.join('&')}` : p;
}

/** The i-th request: each route twice in turn first (none is left out), then routes at random. */
function request(r: Rng, i: number): { method: string; path: string; init: RequestInit & { token?: string | null } } {
  const route = i < routes.length * 2 ? routes[i % routes.length] : r.pick(routes);
  const method = r.int(12) === 0 ? r.pick(ODD_METHODS) : route.method;
  const shaped = route.body && r.int(3) > 0;
  const contentType = shaped && r.int(8) ? 'application/json' : r.pick(CONTENT_TYPES);
  const headers: Record<string, string> = {};
  if (contentType) headers['content-type'] = contentType;
  if (r.int(4) === 0) headers[r.pick(['ce-specversion', 'ce-id', 'cookie', 'x-forwarded-host', 'origin', 'sec-fetch-site', 'accept', 'content-encoding', 'authorization', 'x-signature', 'x-api-key'])] =
    r.pick(['1.0', '0.3', 'svc_session=junk', 'null', 'cross-site', 'gzip', 'Bearer ', 'Basic Zm9vOmJhcg==', 'é', '\t', 'sha256=00', 's3cret']);
  let token = r.int(5) ? s.token : r.pick([null, 'wrong-token']);
  if (!route.template.startsWith('/api/') && r.int(4)) {
    headers.cookie ??= known.cookie;
    token = null;
  }
  const hasBody = !['GET', 'HEAD'].includes(method.toUpperCase());
  const p = path(r, route);
  const payload = shaped ? JSON.stringify(instance(r, route.body, r.int(2) === 0)) : body(r, contentType);
  return { method, path: p, init: { method, headers, token, body: hasBody ? payload : undefined } };
}

/** Writes bytes no HTTP client library would send, and returns the status line of the answer. */
function rawRequest(bytes: string): Promise<string> {
  const { hostname, port } = new URL(s.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(bytes));
    let got = '';
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer')));
    socket.on('data', (d) => (got += d));
    socket.on('error', reject);
    socket.on('close', () => resolve(got.split('\r\n')[0]));
  });
}

describe('fuzzing every public route', () => {
  it(`answers ${REQUESTS} generated requests without a 5xx and keeps answering`, { timeout: 150_000 }, async () => {
    const r = prng(SEED);
    const requests = Array.from({ length: REQUESTS }, (_, i) => request(r, i));
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    let nextIndex = 0;
    const worker = async () => {
      while (nextIndex < requests.length) {
        const index = nextIndex++;
        const { method, path: p, init } = requests[index];
        let status: number | string;
        let answer = '';
        try {
          // The clock starts when the request is sent, not when the list was made.
          const res = await s.fetch(p, { ...init, redirect: 'manual', signal: AbortSignal.timeout(25_000) });
          status = res.status;
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          if (status === 504 && (await res.clone().text()).includes('"sync_wait_timeout"')) {
            await res.body?.cancel();
            continue;
          }
          if (status >= 500) answer = (await res.text()).slice(0, 300);
          else await res.body?.cancel();
        } catch (e) {
          // undici refuses some methods and header values before sending: nothing reached the server.
          if (e instanceof TypeError && !/fetch failed/.test(e.message)) continue;
          status = `no answer (${(e as Error).message})`;
        }
        if (typeof status !== 'number' || status >= 500) {
          const sent = VERBOSE && typeof init.body === 'string' ? ` ${JSON.stringify(init.headers)} body ${init.body.slice(0, 400)}` : '';
          failures.push(`#${index} (seed ${SEED}) ${method} ${p.slice(0, 200)} -> ${status} ${answer}${sent}`);
        }
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    if (failures.length && VERBOSE) console.log(s.output().slice(-6000));
    expect(failures.slice(0, 20)).toEqual([]);
    // Most requests must have reached the server, with a spread of answers, for this to mean anything.
    const answered = [...statuses.values()].reduce((a, b) => a + b, 0);
    if (VERBOSE) console.log(`${routes.length} routes, ${answered} answered`, Object.fromEntries(statuses));
    expect(answered).toBeGreaterThan(REQUESTS * 0.8);
    expect(statuses.size).toBeGreaterThan(5);
    expect((await s.fetch('/api/version')).status).toBe(200);
  });

  it('answers malformed HTTP with a 4xx', async () => {
    const host = new URL(s.url).host;
    for (const bytes of [
      `GET /api/version HTTP/1.1\r\nHost: ${host}\r\nContent-Length: abc\r\n\r\n`,
      `POST /api/w/main/jobs/run/p/f/fuzz/echo HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      `GET /api/version HTTP/1.1\r\nHost: ${host}\r\nX-Bad\u0001: 1\r\n\r\n`,
    ]) {
      expect(await rawRequest(bytes)).toMatch(/^HTTP\/1\.1 4\d\d/);
    }
    expect((await s.fetch('/api/version')).status).toBe(200);
  });
});
