import { Validator } from '@seriousme/openapi-schema-validator';
import { beforeAll, describe, expect, it } from 'vitest';
import { openApiPath } from '../../../functions/core/openapi/api-document.js';
import { API_OPERATIONS } from '../../../functions/http/api-catalog/index.js';
import { inProcessService, type InProcessService } from './harness.js';

/**
 * GET /api/openapi.json describes the whole API (issue 37 item 3): every route the Hono app
 * registers under /api/ is an operation of the document, and every operation is a registered route
 * (so a route added without a catalog entry, or an entry left for a route that was removed or
 * renamed, fails here). The document itself is validated over real HTTP in test/http/api-openapi.test.ts.
 */

/**
 * Registered under /api/ but not operations of the document, each for a reason:
 * - `ALL /api/*`, `ALL /api/w/:workspace/*`: middleware (authentication, the workspace), not routes;
 * - `ALL /api/r/*`: the workspace's own HTTP routes, which POST /api/w/{workspace}/openapi/generate describes.
 */
const NOT_OPERATIONS = new Set(['ALL /api/*', 'ALL /api/w/:workspace/*', 'ALL /api/r/*']);

let s: InProcessService;
type Doc = { paths: Record<string, Record<string, unknown>> };
let doc: Doc;

beforeAll(async () => {
  s = await inProcessService();
  const res = await s.fetch('/api/openapi.json', { token: null });
  expect(res.status).toBe(200);
  doc = (await res.json()) as Doc;
});

function registered(): Set<string> {
  const routes = new Set<string>();
  for (const r of s.app.routes) {
    if (!r.path.startsWith('/api/')) continue;
    const key = `${r.method} ${r.path}`;
    if (NOT_OPERATIONS.has(key)) continue;
    routes.add(`${r.method.toLowerCase()} ${openApiPath(r.path).path}`);
  }
  return routes;
}

function documented(): Set<string> {
  return new Set(Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m} ${path}`)));
}

describe('the API document covers the app', () => {
  it('lists every route the app registers under /api/', () => {
    const missing = [...registered()].filter((r) => !documented().has(r));
    expect(missing, 'routes the app serves that GET /api/openapi.json does not describe (add them to functions/http/api-catalog)').toEqual([]);
  });

  it('describes no route the app does not serve', () => {
    const stale = [...documented()].filter((r) => !registered().has(r));
    expect(stale, 'operations of the document the app does not serve').toEqual([]);
  });

  it('validates as OpenAPI 3.1 and is served without a token', async () => {
    expect(await new Validator().validate(doc as never)).toEqual({ valid: true });
    expect(registered().size).toBeGreaterThan(150);
  });

  it('declares every {parameter} of each path (which the OpenAPI schema alone does not check)', () => {
    for (const [path, methods] of Object.entries(doc.paths)) {
      const inPath = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      for (const [method, operation] of Object.entries(methods as Record<string, { parameters?: { name: string; in: string }[] }>)) {
        const declared = (operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name).sort();
        expect(declared, `${method} ${path}`).toEqual(inPath);
      }
    }
  });
});

/**
 * JSON answers the document describes in words only, each for a reason (docs/api.md says which);
 * every other JSON answer has the schema the service and the CLI are typed with.
 */
const DESCRIBED_IN_WORDS: Record<string, string[]> = {
  'a run\'s result, or data that is the script\'s or the caller\'s own': [
    'post /api/w/:workspace/jobs/run_wait_result/p/:path{.+}',
    'get /api/w/:workspace/jobs/run_wait_result/p/:path{.+}',
    'post /api/w/:workspace/jobs/run_wait_result/h/:hash',
    'get /api/w/:workspace/jobs/run_wait_result/h/:hash',
    'post /api/w/:workspace/jobs/run_wait_result/f/:path{.+}',
    'get /api/w/:workspace/jobs/run_wait_result/f/:path{.+}',
    'post /api/w/:workspace/jobs/run_wait_result/fv/:version',
    'get /api/w/:workspace/jobs/run_wait_result/fv/:version',
    'post /api/w/:workspace/jobs/run_wait_result/preview',
    'post /api/w/:workspace/jobs/run_wait_result/preview_flow',
    'get /api/w/:workspace/jobs_u/completed/get_result/:id',
    'get /api/w/:workspace/jobs_u/completed/get_result_maybe/:id',
    'get /api/w/:workspace/resources/get_value_interpolated/:path{.+}',
    'get /api/w/:workspace/variables/get_value/:path{.+}',
    'get /api/w/:workspace/jobs/flow/user_states/:id/:key{.+}',
  ],
  'a yes or no, one id or a percent (Windmill clients)': [
    'get /api/w/:workspace/resources/exists/:path{.+}',
    'get /api/w/:workspace/variables/exists/:path{.+}',
    'get /api/w/:workspace/jobs_u/get_root_job_id/:id',
    'get /api/w/:workspace/job_metrics/get_progress/:id',
  ],
  'an OpenAPI document': ['get /api/openapi.json', 'post /api/w/:workspace/openapi/generate'],
  'the chat platforms\' callbacks and what they posted': [
    'post /api/w/:workspace/chat/slack/request_approval/:job',
    'post /api/w/:workspace/chat/slack/interactions',
    'post /api/w/:workspace/chat/teams/request_approval/:job',
    'post /api/w/:workspace/chat/teams/send_message/:job',
    'post /api/w/:workspace/chat/teams/messages',
  ],
};

describe('the API document describes answers by schema', () => {
  it('gives every JSON answer a schema, except those it describes in words for a reason', () => {
    const listed = new Set(Object.values(DESCRIBED_IN_WORDS).flat());
    const json = API_OPERATIONS.filter((op) => (op.response.type ?? 'json') === 'json');
    const unexplained = json.filter((op) => !op.response.schema && !listed.has(`${op.method} ${op.path}`)).map((op) => `${op.method} ${op.path}`);
    expect(unexplained, 'a new JSON answer needs a schema in core/views (or a reason here)').toEqual([]);
    const describedAfterAll = json.filter((op) => op.response.schema && listed.has(`${op.method} ${op.path}`)).map((op) => `${op.method} ${op.path}`);
    expect(describedAfterAll, 'answers that have a schema now: take them off the list').toEqual([]);
  });
});
