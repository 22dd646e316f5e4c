import type { InputSchema } from '../../ports.js';
import type { HttpTrigger } from '../triggers/http-trigger-document.js';
import { RESERVED_QUERY } from '../triggers/serve-route.js';
import type { OpenApiInfo, RunnableKind } from './selection.js';

/**
 * Builds the OpenAPI 3.1 document of a workspace's selected custom routes and webhooks (spec 4.1,
 * 4.10): pure, from what generate.ts read with the caller's rights. Paths are absolute from the
 * service root (`/api/r/<ws>/...`, `/api/w/<ws>/jobs/...`) under one server, so a generated client
 * needs nothing but the base URL. Request bodies are each runnable's input schema; a route's
 * `:name` segments are path parameters; every operation states the authentication its URL asks for.
 */

export interface RunnableInfo {
  kind: RunnableKind;
  path: string;
  summary: string;
  description: string;
  schema: InputSchema | null;
}

export interface RouteInfo {
  trigger: HttpTrigger;
  /** The script or flow it runs, or null when the caller may not read it (its schema stays private). */
  target: RunnableInfo | null;
}

export interface DocumentInput {
  info: OpenApiInfo | undefined;
  serverUrl: string;
  workspaceId: string;
  /** Where the workspace's routes are served (`/api/r/<workspace id or its custom prefix>`). */
  routeBase: string;
  routes: RouteInfo[];
  webhooks: RunnableInfo[];
}

type Json = Record<string, unknown>;

const BEARER = 'bearerAuth';
const BASIC = 'basicAuth';
const ERROR_RESPONSE = { $ref: '#/components/responses/Error' };
const JSON_BODY_METHODS: ReadonlySet<string> = new Set(['post', 'put', 'patch']);

export function buildOpenApiDocument(input: DocumentInput): Json {
  const paths: Record<string, Json> = {};
  const schemes = new SecuritySchemes();
  const operationIds = new UniqueNames();
  const add = (path: string, method: string, operation: Json) => {
    paths[path] ??= {};
    paths[path][method] = operation;
  };

  for (const { trigger: t, target } of input.routes) {
    const { path, names } = openApiRoutePath(input.routeBase, t.route_path);
    const schema = target?.schema ?? null;
    const operation: Json = {
      operationId: operationIds.take(`route_${t.http_method}_${t.path}`),
      ...texts(t.summary, t.description),
      security: schemes.forRoute(t),
      parameters: [...names.map(pathParameter), ...(JSON_BODY_METHODS.has(t.http_method) ? [] : queryParameters(schema, names))],
      ...(JSON_BODY_METHODS.has(t.http_method) ? { requestBody: routeBody(schema, names, t.wrap_body) } : {}),
      responses: t.is_async ? asyncResponses() : syncResponses(),
    };
    if ((operation.parameters as unknown[]).length === 0) delete operation.parameters;
    add(path, t.http_method, operation);
  }

  for (const r of input.webhooks) {
    const base = `/api/w/${input.workspaceId}/jobs`;
    const common = () => ({ ...texts(r.summary, r.description), security: [{ [schemes.bearer()]: [] }] });
    const switches = () => WEBHOOK_QUERY.map((name) => ({ $ref: `#/components/parameters/${name}` }));
    const body = () => ({ parameters: switches(), requestBody: jsonBody(argumentsSchema(r.schema, [])) });
    add(`${base}/run/p/${r.path}`, 'post', { operationId: operationIds.take(`run_async_${r.path}`), ...common(), ...body(), responses: asyncResponses() });
    add(`${base}/run_wait_result/p/${r.path}`, 'post', { operationId: operationIds.take(`run_sync_${r.path}`), ...common(), ...body(), responses: syncResponses() });
    // Spec 4.1 gives the GET form (arguments in `payload`) to scripts.
    if (r.kind === 'script') {
      add(`${base}/run_wait_result/p/${r.path}`, 'get', { operationId: operationIds.take(`run_sync_get_${r.path}`), ...common(), parameters: [PAYLOAD_PARAMETER, ...switches()], responses: syncResponses() });
    }
    add(`${base}/run_and_stream/p/${r.path}`, 'post', { operationId: operationIds.take(`run_stream_${r.path}`), ...common(), ...body(), responses: streamResponses() });
  }

  return {
    openapi: '3.1.0',
    info: input.info ?? { title: `svc workspace ${input.workspaceId}`, version: '1.0.0' },
    servers: [{ url: input.serverUrl.replace(/\/+$/, '') }],
    paths,
    components: {
      securitySchemes: schemes.components(),
      ...(input.webhooks.length > 0 ? { parameters: WEBHOOK_QUERY_PARAMETERS } : {}),
      schemas: { Error: ERROR_SCHEMA },
      responses: { Error: { description: 'The request was refused or failed: `{"error": {"code", "message"}}`', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } } },
    },
  };
}

/** `orders/:id` -> `/api/r/<ws>/orders/{id}` and its parameter names. */
function openApiRoutePath(base: string, routePath: string): { path: string; names: string[] } {
  const names: string[] = [];
  const segments = routePath.split('/').map((s) => {
    if (!s.startsWith(':')) return s;
    names.push(s.slice(1));
    return `{${s.slice(1)}}`;
  });
  return { path: `${base}/${segments.join('/')}`, names };
}

function texts(summary: string, description: string): Json {
  return { ...(summary ? { summary } : {}), ...(description ? { description } : {}) };
}

function pathParameter(name: string): Json {
  return { name, in: 'path', required: true, schema: { type: 'string' } };
}

/** A GET or DELETE route takes its arguments from the query string, where every value is a string. */
function queryParameters(schema: InputSchema | null, taken: string[]): Json[] {
  if (!schema) return [];
  return Object.entries(schema.properties)
    .filter(([name]) => !taken.includes(name) && !RESERVED_QUERY.has(name))
    .map(([name, property]) => ({
      name,
      in: 'query',
      required: schema.required.includes(name),
      ...(typeof property.description === 'string' && property.description ? { description: property.description } : {}),
      schema: { type: 'string' },
    }));
}

/** The runnable's input schema less what the URL already supplies; `{type: object}` when it is unknown. */
function argumentsSchema(schema: InputSchema | null, taken: string[]): Json {
  if (!schema) return { type: 'object' };
  const properties = Object.fromEntries(Object.entries(schema.properties).filter(([name]) => !taken.includes(name)).map(([name, p]) => [name, structuredClone(p)]));
  const required = schema.required.filter((name) => !taken.includes(name) && name in properties);
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}

function routeBody(schema: InputSchema | null, taken: string[], wrapBody: boolean): Json {
  // wrap_body: the whole body becomes the argument `body`.
  if (wrapBody) return jsonBody(schema?.properties.body ? structuredClone(schema.properties.body) : {}, schema?.required.includes('body') ?? false);
  return jsonBody(argumentsSchema(schema, taken));
}

function jsonBody(schema: Json, required = Array.isArray(schema.required) && schema.required.length > 0): Json {
  return { required, content: { 'application/json': { schema } } };
}

function asyncResponses(): Json {
  return {
    '201': { description: 'The job was queued: the body is its id (poll GET /api/w/{workspace}/jobs_u/get/{id})', content: { 'text/plain': { schema: { type: 'string', format: 'uuid' } } } },
    default: ERROR_RESPONSE,
  };
}

function syncResponses(): Json {
  return {
    '200': {
      description: 'The run\'s result (a failed run answers 200 with {"error": ...}); a result with svc_status_code, svc_content_type or svc_headers sets the status, type and headers',
      content: { 'application/json': { schema: {} } },
    },
    default: ERROR_RESPONSE,
  };
}

function streamResponses(): Json {
  return {
    '200': { description: 'Server-sent events: the job\'s updates until it completes', content: { 'text/event-stream': { schema: { type: 'string' } } } },
    default: ERROR_RESPONSE,
  };
}

const PAYLOAD_PARAMETER = { name: 'payload', in: 'query', required: true, description: 'The arguments as JSON, then URL-safe base64', schema: { type: 'string' } };

/** The query switches of every run endpoint (spec 4.2, 4.3). */
const WEBHOOK_QUERY_PARAMETERS: Record<string, Json> = {
  wrap_body: { name: 'wrap_body', in: 'query', required: false, description: 'true: the whole body becomes the argument `body`', schema: { type: 'boolean' } },
  raw: { name: 'raw', in: 'query', required: false, description: 'true: adds the argument `raw_string`, the unparsed body', schema: { type: 'boolean' } },
  include_header: { name: 'include_header', in: 'query', required: false, description: 'Comma-separated request headers passed as arguments', schema: { type: 'string' } },
  include_query: { name: 'include_query', in: 'query', required: false, description: 'Comma-separated query arguments passed as arguments', schema: { type: 'string' } },
};
const WEBHOOK_QUERY = Object.keys(WEBHOOK_QUERY_PARAMETERS);

const ERROR_SCHEMA = {
  type: 'object',
  required: ['error'],
  properties: { error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } } },
};

/** The security schemes the document's operations use, each declared once. */
class SecuritySchemes {
  private readonly declared = new Map<string, Json>();
  private readonly names = new UniqueNames();
  private readonly byHeader = new Map<string, string>();

  bearer(): string {
    if (!this.declared.has(BEARER)) {
      this.declared.set(BEARER, { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An svc API token (or a job\'s OV_TOKEN) in "Authorization: Bearer <token>"' });
    }
    return BEARER;
  }

  forRoute(t: HttpTrigger): Json[] {
    switch (t.authentication_method) {
      case 'svc':
        return [{ [this.bearer()]: [] }];
      case 'none':
        return [];
      case 'basic':
        if (!this.declared.has(BASIC)) this.declared.set(BASIC, { type: 'http', scheme: 'basic', description: 'The user name and password of the route\'s connection' });
        return [{ [BASIC]: [] }];
      case 'api_key':
        return [{ [this.header('apiKey', t.api_key_header!, 'The route\'s key')]: [] }];
      case 'signature':
        return [{ [this.header('signature', t.signature_header!, '"sha256=" and the hex HMAC-SHA256 of the raw request body, keyed by the route\'s secret')]: [] }];
    }
  }

  /** OpenAPI has no scheme for an HMAC header: it is a header credential, described. */
  private header(kind: string, header: string, description: string): string {
    const key = `${kind} ${header.toLowerCase()}`;
    let name = this.byHeader.get(key);
    if (!name) {
      name = this.names.take(`${kind}_${header.replace(/[^A-Za-z0-9._-]/g, '_')}`);
      this.byHeader.set(key, name);
      this.declared.set(name, { type: 'apiKey', in: 'header', name: header, description });
    }
    return name;
  }

  components(): Json {
    return Object.fromEntries(this.declared);
  }
}

/** Names made from paths, kept unique (`a_b` and `a/b` sanitize alike) by a numeric suffix. */
class UniqueNames {
  private readonly taken = new Set<string>();

  take(raw: string): string {
    const base = raw.replace(/[^A-Za-z0-9._-]/g, '_');
    let name = base;
    for (let i = 2; this.taken.has(name); i++) name = `${base}_${i}`;
    this.taken.add(name);
    return name;
  }
}
