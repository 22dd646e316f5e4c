import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';
import { flowListSchema, flowSchema, folderSchema, groupSchema, resourceSchema, resourceTypeSchema, scriptListSchema, scriptSchema } from '../../functions/core/views/item-views.js';
import { jobListSchema, jobWithFlowStatusSchema } from '../../functions/core/views/job-view.js';
import { tokenSchema, userSchema } from '../../functions/core/views/identity-views.js';

/**
 * svc's own API describes itself (issue 37 item 3), in both shells: GET /api/openapi.json answers
 * without a token (as Windmill's /api/openapi.yaml does) with a valid OpenAPI 3.1 document whose
 * request bodies are the schemas the API validates with, and /openapi renders it as a page.
 * That every route is in the document: test/unit/in-process/api-openapi.test.ts.
 */

type Doc = { openapi: string; servers: { url: string }[]; paths: Record<string, Record<string, any>>; components: { schemas: Record<string, any>; securitySchemes: Record<string, unknown> } };

let s: TestServer;
let doc: Doc;
beforeAll(async () => {
  s = await startServer();
  const res = await s.fetch('/api/openapi.json', { token: null });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  doc = (await res.json()) as Doc;
});
afterAll(() => s?.stop());

const bodySchema = (path: string, method = 'post') => {
  const ref: string = doc.paths[path]![method].requestBody.content['application/json'].schema.$ref;
  return doc.components.schemas[ref.replace('#/components/schemas/', '')];
};

describe('GET /api/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document of the API, served to anyone, for this server', async () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(await new Validator().validate(doc as never)).toEqual({ valid: true });
    expect(doc.servers[0]!.url).toBe(s.url);
    for (const path of ['/api/w/{workspace}/scripts/create', '/api/w/{workspace}/flows/create', '/api/w/{workspace}/jobs_u/get/{id}', '/api/users/tokens/create', '/api/w/{workspace}/schedules/create', '/api/w/{workspace}/jobs/runs']) {
      expect(Object.keys(doc.paths), path).toContain(path);
    }
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['bearerAuth', 'cookieAuth']);
    expect(doc.paths['/api/w/{workspace}/scripts/list']!.get.security).toEqual([{ bearerAuth: [] }, { cookieAuth: [] }]);
  });

  it('describes a body as the API validates it: what the schema requires, the API refuses without', async () => {
    const script = bodySchema('/api/w/{workspace}/scripts/create');
    expect(script.required).toEqual(expect.arrayContaining(['path', 'content', 'language']));
    expect(script.additionalProperties).toBe(false);
    expect(script.properties.language.enum).toContain('python3');
    const missing = await s.post(`/api/w/${s.workspace}/scripts/create`, { path: 'u/admin/no_content', language: 'python3' });
    expect(missing.status).toBe(400);
    const unknown = await s.post(`/api/w/${s.workspace}/scripts/create`, { path: 'u/admin/extra', language: 'python3', content: 'def main():\n  return 1\n', no_such_field: 1 });
    expect(unknown.status).toBe(400);

    // The flow definition is recursive (branches and loops hold modules): its modules are a shared component.
    expect(JSON.stringify(bodySchema('/api/w/{workspace}/flows/create'))).toMatch(/#\/components\/schemas\/Request_schema\d+/);
    // Query parameters come from the same schemas as well.
    const runs = doc.paths['/api/w/{workspace}/jobs/runs']!.get.parameters.map((p: { name: string }) => p.name);
    expect(runs).toEqual(expect.arrayContaining(['workspace', 'path', 'per_page']));
  });

  it('is rendered as a reference page at /openapi', async () => {
    const res = await s.fetch('/openapi', { token: null });
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('/api/w/{workspace}/scripts/create');
    expect(page).toContain('href="/api/openapi.json"');
    expect(page).toContain('PostScriptsCreateBody');
  });

  it('describes scripts, flows, jobs, users, tokens, folders, groups and resources as the API answers them', async () => {
    const w = `/api/w/${s.workspace}`;
    await createScript(s, 'u/admin/described', 'bun', 'export function main(x: number) { return x * 2 }');
    expect((await s.post(`${w}/flows/create`, { path: 'u/admin/described_flow', value: { modules: [{ id: 'a', value: { type: 'rawscript', language: 'bun', content: 'export function main() { return 1 }' } }] } })).status).toBe(201);
    expect((await s.post('/api/users/tokens/create', { label: 'described' })).status).toBe(201);
    expect((await s.post(`${w}/folders/create`, { name: 'described' })).status).toBe(201);
    expect((await s.post(`${w}/groups/create`, { name: 'described' })).status).toBe(201);
    expect((await s.post(`${w}/resources/type/create`, { name: 'described', schema: { type: 'object' } })).status).toBe(201);
    expect((await s.post(`${w}/resources/create`, { path: 'u/admin/described_res', resource_type: 'described', value: { a: 1 } })).status).toBe(201);
    const id = await (await s.post(`${w}/jobs/run/p/u/admin/described`, { x: 2 })).text();
    await waitForJob(s, id);
    const answers: [string, z.ZodType, string][] = [
      [`${w}/scripts/get/p/u/admin/described`, scriptSchema, '/api/w/{workspace}/scripts/get/p/{path}'],
      [`${w}/scripts/list`, scriptListSchema, '/api/w/{workspace}/scripts/list'],
      [`${w}/flows/get/u/admin/described_flow`, flowSchema, '/api/w/{workspace}/flows/get/{path}'],
      [`${w}/flows/list`, flowListSchema, '/api/w/{workspace}/flows/list'],
      [`${w}/jobs_u/get/${id}`, jobWithFlowStatusSchema, '/api/w/{workspace}/jobs_u/get/{id}'],
      [`${w}/jobs/list`, jobListSchema, '/api/w/{workspace}/jobs/list'],
      ['/api/users/whoami', userSchema, '/api/users/whoami'],
      ['/api/users/tokens/list', z.array(tokenSchema), '/api/users/tokens/list'],
      [`${w}/folders/get/described`, folderSchema, '/api/w/{workspace}/folders/get/{name}'],
      [`${w}/groups/get/described`, groupSchema, '/api/w/{workspace}/groups/get/{name}'],
      [`${w}/resources/type/get/described`, resourceTypeSchema, '/api/w/{workspace}/resources/type/get/{name}'],
      [`${w}/resources/get/u/admin/described_res`, resourceSchema, '/api/w/{workspace}/resources/get/{path}'],
    ];
    for (const [url, schema, path] of answers) {
      const answer: unknown = await (await s.fetch(url)).json();
      const parsed = schema.safeParse(answer);
      expect(parsed.success, `${url}: ${parsed.error?.message}`).toBe(true);
      // Nothing the schema leaves out: the answer has no field the document does not name.
      expect(answer, url).toEqual(parsed.data);
      expect(doc.paths[path]!.get.responses['200'].content['application/json'].schema.$ref, path).toMatch(/^#\/components\/schemas\//);
    }
  });
});
