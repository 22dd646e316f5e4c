import { z } from 'zod';

/**
 * Builds the OpenAPI 3.1 document of svc's own API (`GET /api/openapi.json`) from a catalog of
 * operations. Every request body, query and response that has a schema is the very zod schema the
 * route validates with (or the core shapes its answer with), turned into JSON Schema by zod's own
 * `z.toJSONSchema` (draft 2020-12, the dialect of OpenAPI 3.1): there is no second description.
 */

export type ApiMethod = 'get' | 'post' | 'put' | 'delete';

/**
 * Who may call an operation: `token` an API token, a job's token or a session cookie; `public`
 * nobody in particular; `signed` the URL carries its own signature (resume and cancel links,
 * upload parts); `chat` the chat platform proves itself (Slack signs the body, Teams sends a JWT).
 */
export type ApiAuth = 'token' | 'public' | 'signed' | 'chat';

export interface ApiResponse {
  status?: number;
  /** json (the default), text (text/plain), sse (text/event-stream), html, binary, redirect, empty. */
  type?: 'json' | 'text' | 'sse' | 'html' | 'binary' | 'redirect' | 'empty';
  description: string;
  /** The response body's schema (json only); left out when the answer is not described yet. */
  schema?: z.ZodType;
}

export interface ApiOperation {
  method: ApiMethod;
  /** The path as the Hono app registers it (`/api/w/:workspace/scripts/get/p/:path{.+}`). */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  auth?: ApiAuth;
  /** The request body: its zod schema, `arguments` (a run's arguments object), or `binary`. */
  body?: z.ZodType | 'arguments' | 'binary';
  /** A JSON body the route accepts but does not need. */
  bodyOptional?: boolean;
  query?: z.ZodObject;
  response: ApiResponse;
}

export interface ApiDocumentInput {
  version: string;
  serverUrl: string;
  sessionCookie: string;
  operations: readonly ApiOperation[];
}

type Json = Record<string, unknown>;

const ERROR_REF = { $ref: '#/components/responses/Error' };
const MEDIA: Record<NonNullable<ApiResponse['type']>, string | null> = {
  json: 'application/json',
  text: 'text/plain',
  sse: 'text/event-stream',
  html: 'text/html',
  binary: 'application/octet-stream',
  redirect: null,
  empty: null,
};

export function buildApiDocument(input: ApiDocumentInput): Json {
  const bodies = new NamedSchemas('Request');
  const answers = new NamedSchemas('Response');
  const operationIds = new Set<string>();
  const paths: Record<string, Json> = {};

  for (const op of input.operations) {
    const { path, names } = openApiPath(op.path);
    const operationId = uniqueId(operationIds, op);
    const operation: Json = {
      operationId,
      tags: [op.tag],
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      security: securityOf(op.auth ?? 'token'),
      parameters: [...names.map(pathParameter), ...queryParameters(op.query)],
      ...(op.body ? { requestBody: requestBody(op, bodies, operationId) } : {}),
      responses: { [String(op.response.status ?? 200)]: response(op.response, answers, operationId), default: ERROR_REF },
    };
    if ((operation.parameters as unknown[]).length === 0) delete operation.parameters;
    paths[path] ??= {};
    if (paths[path][op.method]) throw new Error(`the API catalog names ${op.method.toUpperCase()} ${op.path} twice`);
    paths[path][op.method] = operation;
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'svc API',
      version: input.version,
      description: 'The HTTP API of svc: scripts, flows, jobs and runs, approvals, users and tokens, resources and variables, events, routes, schedules, uploads and the console. Errors answer `{"error": {"code", "message"}}`.',
    },
    servers: [{ url: input.serverUrl.replace(/\/+$/, '') }],
    tags: [...new Set(input.operations.map((o) => o.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas: { ...bodies.jsonSchemas('input'), ...answers.jsonSchemas('output'), Error: ERROR_SCHEMA },
      responses: { Error: { description: 'The request was refused or failed', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } } },
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An svc API token (or a job\'s token) in "Authorization: Bearer <token>"; `?token=` in the query works too' },
        cookieAuth: { type: 'apiKey', in: 'cookie', name: input.sessionCookie, description: 'The session cookie POST /api/auth/login sets (same-origin requests only)' },
      },
    },
  };
}

/** `/api/w/:workspace/scripts/get/p/:path{.+}` -> `/api/w/{workspace}/scripts/get/p/{path}`. */
export function openApiPath(honoPath: string): { path: string; names: string[] } {
  const names: string[] = [];
  const path = honoPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)(\{[^}]*\})?/g, (_m, name: string) => {
    names.push(name);
    return `{${name}}`;
  });
  return { path, names };
}

function uniqueId(taken: Set<string>, op: ApiOperation): string {
  const words = op.path.replace(/^\/api\/(w\/:workspace\/)?/, '').split('/').filter((s) => s && !s.startsWith(':'));
  const base = `${op.method}_${words.join('_')}`.replace(/[^A-Za-z0-9_]/g, '_');
  let id = base;
  for (let i = 2; taken.has(id); i++) id = `${base}_${i}`;
  taken.add(id);
  return id;
}

function securityOf(auth: ApiAuth): Json[] {
  return auth === 'token' ? [{ bearerAuth: [] }, { cookieAuth: [] }] : [];
}

function pathParameter(name: string): Json {
  const description = name === 'path' ? 'An item path (`u/<user>/...` or `f/<folder>/...`); its slashes stay as they are' : undefined;
  return { name, in: 'path', required: true, ...(description ? { description } : {}), schema: { type: 'string' } };
}

function queryParameters(query: z.ZodObject | undefined): Json[] {
  if (!query) return [];
  const schema = stripMeta(z.toJSONSchema(query, { io: 'input', unrepresentable: 'any' }) as Json);
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({ name, in: 'query', required: required.has(name), schema: property }));
}

function requestBody(op: ApiOperation, bodies: NamedSchemas, operationId: string): Json {
  if (op.body === 'binary') return { required: true, content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } };
  if (op.body === 'arguments') {
    return {
      required: false,
      description: 'The run\'s arguments as a JSON object (multipart/form-data and other types: see the webhooks guide)',
      content: { 'application/json': { schema: { type: 'object' } } },
    };
  }
  return { required: !op.bodyOptional, content: { 'application/json': { schema: bodies.ref(op.body!, `${pascal(operationId)}Body`) } } };
}

function response(r: ApiResponse, answers: NamedSchemas, operationId: string): Json {
  const media = MEDIA[r.type ?? 'json'];
  if (!media) return { description: r.description };
  const schema = r.schema ? answers.ref(r.schema, `${pascal(operationId)}Response`) : r.type === 'text' || r.type === 'sse' || r.type === 'html' ? { type: 'string' } : {};
  return { description: r.description, content: { [media]: { schema } } };
}

function pascal(id: string): string {
  return id.split('_').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
}

/**
 * Zod schemas named in `components/schemas`, one name per schema object (a body two routes share
 * is described once). zod writes what several schemas share (recursive flow modules) under
 * `__shared`; those definitions are lifted to components of their own so every `$ref` is local.
 */
class NamedSchemas {
  private readonly registry = z.registry<{ id: string }>();
  private readonly names = new Map<z.ZodType, string>();

  constructor(private readonly sharedPrefix: string) {}

  ref(schema: z.ZodType, name: string): Json {
    let taken = this.names.get(schema);
    if (!taken) {
      taken = name;
      this.names.set(schema, taken);
      this.registry.add(schema, { id: taken });
    }
    return { $ref: `#/components/schemas/${taken}` };
  }

  jsonSchemas(io: 'input' | 'output'): Record<string, Json> {
    if (this.names.size === 0) return {};
    const { schemas } = z.toJSONSchema(this.registry, { io, unrepresentable: 'any', uri: (id) => `#/components/schemas/${id}` }) as { schemas: Record<string, Json> };
    const out: Record<string, Json> = {};
    for (const [id, schema] of Object.entries(schemas)) {
      if (id === '__shared') {
        for (const [def, value] of Object.entries((schema.$defs ?? {}) as Record<string, Json>)) out[`${this.sharedPrefix}_${def}`] = value;
      } else {
        out[id] = stripMeta(schema);
      }
    }
    return this.relinked(out);
  }

  private relinked(schemas: Record<string, Json>): Record<string, Json> {
    const text = JSON.stringify(schemas).replace(/#\/components\/schemas\/__shared#\/\$defs\/([A-Za-z0-9_]+)/g, `#/components/schemas/${this.sharedPrefix}_$1`);
    return JSON.parse(text) as Record<string, Json>;
  }
}

function stripMeta(schema: Json): Json {
  const { $schema: _s, $id: _i, ...rest } = schema;
  return rest;
}

const ERROR_SCHEMA = {
  type: 'object',
  required: ['error'],
  properties: { error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } } },
};
