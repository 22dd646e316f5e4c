import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';
import {
  appHistorySchema,
  appListSchema,
  appSchema,
  archivedFlowSchema,
  flowHistorySchema,
  folderSchema,
  groupSchema,
  resourceListItemSchema,
  resourceTypeSchema,
  updatedResourceSchema,
  variableSchema,
  variableWithValueSchema,
} from '../../functions/core/views/item-views.js';
import { auditEntrySchema, inviteSchema, loginSchema, memberSchema, myInviteSchema, noticeSchema } from '../../functions/core/views/identity-views.js';
import { canceledStepSchema, consentOutcomeSchema, resumeOutcomeSchema, resumeUrlsSchema, runtimeSchema } from '../../functions/core/views/approval-views.js';
import { httpTriggerSchema, scheduleSchema } from '../../functions/core/views/trigger-views.js';
import {
  chatConnectionSchema,
  deliverySchema,
  errorHandlerSchema,
  instanceWebhookSchema,
  retentionSchema,
  routePrefixSchema,
  syncKeySchema,
  workspaceSchema,
  workspaceSettingsSchema,
  workspaceWebhookSchema,
} from '../../functions/core/views/settings-views.js';
import { abortedUploadSchema, bulkCancelSchema, jobLogUpdateSchema, createdUploadSchema, runPageSchema, storedObjectSchema, uploadedPartSchema } from '../../functions/core/views/run-views.js';

/**
 * The answers of variables, apps, schedules, routes, workspace settings, events, the console's runs,
 * uploads, members and invitations, resources, flow history, approvals and the runtime are what
 * GET /api/openapi.json says (issue 37 item 3), in both shells: each real
 * answer parses with the schema the document describes it by, and has no field the schema does not
 * name. (Scripts, flows, jobs, users and the rest: test/http/api-openapi.test.ts.)
 */

type Doc = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: { $ref?: string } }> }> }>> };

let s: TestServer;
let doc: Doc;
beforeAll(async () => {
  // Events go to a receiver on loopback only when private addresses are allowed; none listens there.
  s = await startServer({ env: { SVC_WEBHOOK_ALLOW_PRIVATE: '1' } });
  doc = (await (await s.fetch('/api/openapi.json', { token: null })).json()) as Doc;
});
afterAll(() => s?.stop());

const W = () => `/api/w/${s.workspace}`;

/** The answer parses with `schema`, keeps no field it does not name, and the document describes the operation's answer with a schema. */
async function expectDescribed(res: Response, schema: z.ZodType, operation: string, status = 200): Promise<any> {
  const [method, path] = operation.split(' ') as [string, string];
  const text = await res.text();
  expect(res.status, `${operation}: ${text}`).toBe(status);
  const answer: unknown = JSON.parse(text);
  const parsed = schema.safeParse(answer);
  expect(parsed.success, `${operation}: ${parsed.error?.message}`).toBe(true);
  expect(answer, operation).toEqual(parsed.data);
  const described = doc.paths[path]?.[method]?.responses[String(status)]?.content?.['application/json']?.schema;
  expect(described?.$ref, `${operation} has a response schema in the document`).toMatch(/^#\/components\/schemas\//);
  return answer;
}

const wsPath = (path: string) => `/api/w/{workspace}${path}`;

describe('the API document describes the answers', () => {
  it('of variables and apps', async () => {
    expect((await s.post(`${W()}/variables/create`, { path: 'u/admin/plain', value: 'v', is_secret: false })).status).toBe(201);
    expect((await s.post(`${W()}/variables/create`, { path: 'u/admin/secret', value: 's3cret', is_secret: true })).status).toBe(201);
    const listed = await expectDescribed(await s.fetch(`${W()}/variables/list`), z.array(variableSchema), `get ${wsPath('/variables/list')}`);
    expect(listed.find((v: { path: string }) => v.path === 'u/admin/secret')).not.toHaveProperty('value');
    await expectDescribed(await s.fetch(`${W()}/variables/get/u/admin/secret`), variableWithValueSchema, `get ${wsPath('/variables/get/{path}')}`);
    await expectDescribed(await s.fetch(`${W()}/variables/get/u/admin/secret?encrypted=true`), variableWithValueSchema, `get ${wsPath('/variables/get/{path}')}`);
    await expectDescribed(await s.post(`${W()}/variables/update/u/admin/plain`, { value: 'w' }), variableSchema, `post ${wsPath('/variables/update/{path}')}`);

    expect((await s.post(`${W()}/apps/create`, { path: 'u/admin/app', summary: 'an app', value: { grid: [] } })).status).toBe(201);
    const updated = await expectDescribed(await s.post(`${W()}/apps/update/u/admin/app`, { path: 'u/admin/app', value: { grid: [1] }, deployment_message: 'second' }), appSchema, `post ${wsPath('/apps/update/{path}')}`);
    await expectDescribed(await s.fetch(`${W()}/apps/get/p/u/admin/app`), appSchema, `get ${wsPath('/apps/get/p/{path}')}`);
    await expectDescribed(await s.fetch(`${W()}/apps/get/v/${updated.id}`), appSchema, `get ${wsPath('/apps/get/v/{id}')}`);
    await expectDescribed(await s.fetch(`${W()}/apps/history/p/u/admin/app`), appHistorySchema, `get ${wsPath('/apps/history/p/{path}')}`);
    await expectDescribed(await s.fetch(`${W()}/apps/list`), appListSchema, `get ${wsPath('/apps/list')}`);
  });

  it('of schedules and HTTP routes', async () => {
    await createScript(s, 'u/admin/target', 'bun', 'export function main(n = 1) { return n }');
    const schedule = { path: 'u/admin/nightly', schedule: '0 0 4 * * *', timezone: 'Europe/Paris', script_path: 'u/admin/target', is_flow: false, args: { n: 2 } };
    await expectDescribed(await s.post(`${W()}/schedules/create`, schedule), scheduleSchema, `post ${wsPath('/schedules/create')}`, 201);
    await expectDescribed(await s.post(`${W()}/schedules/update/u/admin/nightly`, { ...schedule, args: { n: 3 } }), scheduleSchema, `post ${wsPath('/schedules/update/{path}')}`);
    await expectDescribed(await s.post(`${W()}/schedules/setenabled/u/admin/nightly`, { enabled: false }), scheduleSchema, `post ${wsPath('/schedules/setenabled/{path}')}`);
    await expectDescribed(await s.fetch(`${W()}/schedules/get/u/admin/nightly`), scheduleSchema, `get ${wsPath('/schedules/get/{path}')}`);
    await expectDescribed(await s.fetch(`${W()}/schedules/list`), z.array(scheduleSchema), `get ${wsPath('/schedules/list')}`);

    const route = { path: 'u/admin/route', route_path: 'things/:id', http_method: 'post', script_path: 'u/admin/target', is_flow: false, is_async: false, authentication_method: 'none' };
    await expectDescribed(await s.post(`${W()}/http_triggers/create`, route), httpTriggerSchema, `post ${wsPath('/http_triggers/create')}`, 201);
    await expectDescribed(await s.post(`${W()}/http_triggers/update/u/admin/route`, { ...route, summary: 'things' }), httpTriggerSchema, `post ${wsPath('/http_triggers/update/{path}')}`);
    await expectDescribed(await s.fetch(`${W()}/http_triggers/get/u/admin/route`), httpTriggerSchema, `get ${wsPath('/http_triggers/get/{path}')}`);
    await expectDescribed(await s.fetch(`${W()}/http_triggers/list`), z.array(httpTriggerSchema), `get ${wsPath('/http_triggers/list')}`);
  });

  it('of workspace settings and chat connections', async () => {
    await expectDescribed(await s.fetch('/api/workspaces/list'), z.array(workspaceSchema), 'get /api/workspaces/list');
    await expectDescribed(await s.post(`${W()}/workspaces/edit_object_storage`, { enabled: true }), workspaceSchema, `post ${wsPath('/workspaces/edit_object_storage')}`);
    await createScript(s, 'u/admin/on_error', 'bun', 'export function main(path: string) { return path }');
    await expectDescribed(await s.post(`${W()}/workspaces/edit_error_handler`, { path: 'u/admin/on_error', extra_args: { channel: '#ops' } }), errorHandlerSchema, `post ${wsPath('/workspaces/edit_error_handler')}`);
    await expectDescribed(await s.post(`${W()}/workspaces/edit_webhook`, { webhook: 'http://127.0.0.1:9/events', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }), workspaceWebhookSchema, `post ${wsPath('/workspaces/edit_webhook')}`);
    const settings = await expectDescribed(await s.fetch(`${W()}/workspaces/get_settings`), workspaceSettingsSchema, `get ${wsPath('/workspaces/get_settings')}`);
    expect(settings).toMatchObject({ object_storage_enabled: true, has_secret: true, error_handler: { path: 'u/admin/on_error' } });
    await expectDescribed(await s.fetch(`${W()}/workspaces/route_prefix`), routePrefixSchema, `get ${wsPath('/workspaces/route_prefix')}`);
    await expectDescribed(await s.fetch(`${W()}/workspaces/encryption_key`), syncKeySchema, `get ${wsPath('/workspaces/encryption_key')}`);
    await expectDescribed(await s.post(`${W()}/workspaces/retention`, { max_age_days: 30, max_count: 1000 }), retentionSchema, `post ${wsPath('/workspaces/retention')}`);
    await expectDescribed(await s.fetch(`${W()}/workspaces/retention`), retentionSchema, `get ${wsPath('/workspaces/retention')}`);
    await expectDescribed(
      await s.post(`${W()}/workspaces/chat_connections/slack`, { platform: 'slack', bot_token: 'xoxb-1', signing_secret: 'secret' }),
      chatConnectionSchema,
      `post ${wsPath('/workspaces/chat_connections/{name}')}`,
    );
    await expectDescribed(await s.fetch(`${W()}/workspaces/chat_connections`), z.array(chatConnectionSchema), `get ${wsPath('/workspaces/chat_connections')}`);
  });

  it('of workspace and instance events and their deliveries', async () => {
    expect((await s.post(`${W()}/workspaces/edit_webhook`, { webhook: 'http://127.0.0.1:9/events' })).status).toBe(200);
    expect((await s.post(`${W()}/variables/create`, { path: 'u/admin/announced', value: 'x', is_secret: false })).status).toBe(201);
    const deliveries = await expectDescribed(await s.fetch(`${W()}/workspaces/webhook_deliveries`), z.array(deliverySchema), `get ${wsPath('/workspaces/webhook_deliveries')}`);
    expect(deliveries.length).toBeGreaterThan(0);
    await expectDescribed(await redeliver(`${W()}/workspaces/webhook_deliveries/${deliveries[0].id}/redeliver`), deliverySchema, `post ${wsPath('/workspaces/webhook_deliveries/{id}/redeliver')}`);

    await expectDescribed(await s.post('/api/settings/instance_events_webhook', { url: 'http://127.0.0.1:9/instance' }), instanceWebhookSchema, 'post /api/settings/instance_events_webhook');
    await expectDescribed(await s.fetch('/api/settings/instance_events_webhook'), instanceWebhookSchema, 'get /api/settings/instance_events_webhook');
    expect((await s.post('/api/users/create', { username: 'described', email: 'described@example.com', password: 'a long password' })).status).toBe(201);
    const instance = await expectDescribed(await s.fetch('/api/settings/instance_events_deliveries'), z.array(deliverySchema), 'get /api/settings/instance_events_deliveries');
    await expectDescribed(await redeliver(`/api/settings/instance_events_deliveries/${instance[0].id}/redeliver`), deliverySchema, 'post /api/settings/instance_events_deliveries/{id}/redeliver');
  });

  it('of members, invitations, groups, folders and resources', async () => {
    await expectDescribed(await s.fetch('/api/runtime', { token: null }), runtimeSchema, 'get /api/runtime');
    expect((await s.post('/api/users/create', { username: 'member', email: 'member@example.com', password: 'a long password' })).status).toBe(201);
    expect((await s.post('/api/users/create', { username: 'invitee', email: 'invitee@example.com', password: 'a long password' })).status).toBe(201);
    await expectDescribed(await s.post(`${W()}/workspaces/add_user`, { username: 'member', role: 'developer' }), memberSchema, `post ${wsPath('/workspaces/add_user')}`, 201);
    await expectDescribed(await s.post(`${W()}/users/update/member`, { role: 'operator' }), memberSchema, `post ${wsPath('/users/update/{username}')}`);
    await expectDescribed(await s.fetch(`${W()}/users/list`), z.array(memberSchema), `get ${wsPath('/users/list')}`);
    await expectDescribed(await s.post(`${W()}/workspaces/invite_user`, { username: 'invitee', role: 'developer' }), inviteSchema, `post ${wsPath('/workspaces/invite_user')}`, 201);
    await expectDescribed(await s.fetch(`${W()}/workspaces/list_pending_invites`), z.array(inviteSchema), `get ${wsPath('/workspaces/list_pending_invites')}`);
    const invitee = await tokenOf('invitee');
    await expectDescribed(await s.fetch('/api/users/list_invites', { token: invitee }), z.array(myInviteSchema), 'get /api/users/list_invites');
    const accept = await s.fetch('/api/users/accept_invite', { method: 'POST', token: invitee, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ workspace_id: s.workspace }) });
    await expectDescribed(accept, memberSchema, 'post /api/users/accept_invite');

    expect((await s.post(`${W()}/groups/create`, { name: 'finance', summary: 'pays' })).status).toBe(201);
    await expectDescribed(await s.post(`${W()}/groups/adduser/finance`, { username: 'member' }), groupSchema, `post ${wsPath('/groups/adduser/{name}')}`);
    await expectDescribed(await s.post(`${W()}/groups/removeuser/finance`, { username: 'member' }), groupSchema, `post ${wsPath('/groups/removeuser/{name}')}`);
    expect((await s.post(`${W()}/folders/create`, { name: 'described' })).status).toBe(201);
    await expectDescribed(await s.post(`${W()}/folders/update/described`, { owners: ['u/admin'] }), folderSchema, `post ${wsPath('/folders/update/{name}')}`);

    expect((await s.post(`${W()}/resources/type/create`, { name: 'described_db', schema: { type: 'object' } })).status).toBe(201);
    await expectDescribed(await s.post(`${W()}/resources/type/update/described_db`, { description: 'a database' }), resourceTypeSchema, `post ${wsPath('/resources/type/update/{name}')}`);
    expect((await s.post(`${W()}/resources/create`, { path: 'u/admin/db', resource_type: 'described_db', value: { host: 'db' } })).status).toBe(201);
    await expectDescribed(await s.post(`${W()}/resources/update/u/admin/db`, { value: { host: 'db2' } }), updatedResourceSchema, `post ${wsPath('/resources/update/{path}')}`);
    const resources = await expectDescribed(await s.fetch(`${W()}/resources/list`), z.array(resourceListItemSchema), `get ${wsPath('/resources/list')}`);
    expect(resources.map((r: { path: string }) => r.path)).toContain('u/admin/db');
  });

  it('of flow history, approval steps and ConsentGates', async () => {
    const step = { id: 'ask', value: { type: 'rawscript', language: 'bun', content: 'export function main() { return 1 }', input_transforms: {} }, suspend: { required_events: 2, timeout: 600 } };
    expect((await s.post(`${W()}/flows/create`, { path: 'u/admin/approved', value: { modules: [step] } })).status).toBe(201);
    await expectDescribed(await s.fetch(`${W()}/flows/history/p/u/admin/approved`), flowHistorySchema, `get ${wsPath('/flows/history/p/{path}')}`);

    const suspended = await runUntil('u/admin/approved', 'suspended');
    const stepJob = suspended.flow_status.suspend.step_job;
    const urls = await expectDescribed(await s.fetch(`${W()}/jobs/resume_urls/${stepJob}/1`), resumeUrlsSchema, `get ${wsPath('/jobs/resume_urls/{job}/{resumeId}')}`);
    await expectDescribed(await s.post(local(urls.resume), {}), resumeOutcomeSchema, `post ${wsPath('/jobs_u/resume/{job}/{resumeId}/{signature}')}`);
    const other = await expectDescribed(await s.fetch(`${W()}/jobs/resume_urls/${stepJob}/2`), resumeUrlsSchema, `get ${wsPath('/jobs/resume_urls/{job}/{resumeId}')}`);
    await expectDescribed(await s.post(local(other.cancel), { reason: 'no' }), canceledStepSchema, `post ${wsPath('/jobs_u/cancel/{job}/{resumeId}/{signature}')}`);

    // The one who started a run may not decide its gate: another member does.
    expect((await s.post('/api/users/create', { username: 'approver', email: 'approver@example.com', password: 'a long password' })).status).toBe(201);
    expect((await s.post(`${W()}/workspaces/add_user`, { username: 'approver', role: 'developer' })).status).toBe(201);
    const approver = await tokenOf('approver');
    const gate = { id: 'gate', value: { type: 'consentgate', approvers: ['approver'], timeout: 600, message: 'pay?' } };
    expect((await s.post(`${W()}/flows/create`, { path: 'u/admin/gated', value: { modules: [gate] } })).status).toBe(201);
    const waiting = await runUntil('u/admin/gated', 'awaiting_approval');
    const decided = await s.fetch(`/api/v1/runs/${waiting.id}/consent`, { method: 'POST', token: approver, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'approved', reason: 'fine' }) });
    await expectDescribed(decided, consentOutcomeSchema, 'post /api/v1/runs/{run_id}/consent');
    await expectDescribed(await s.post(`${W()}/flows/archive/u/admin/gated`, { archived: true }), archivedFlowSchema, `post ${wsPath('/flows/archive/{path}')}`);
  });

  it('of a login, notices, the audit log and a job\'s log update', async () => {
    expect((await s.post('/api/users/create', { username: 'reader', email: 'reader@example.com', password: 'a long password' })).status).toBe(201);
    const login = await s.fetch('/api/auth/login', { method: 'POST', token: null, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'reader@example.com', password: 'a long password' }) });
    expect((await expectDescribed(login, loginSchema, 'post /api/auth/login')).username).toBe('reader');
    await expectDescribed(await s.fetch('/api/users/notifications'), z.array(noticeSchema), 'get /api/users/notifications');
    await expectDescribed(await s.fetch('/api/audit/list'), z.array(auditEntrySchema), 'get /api/audit/list');
    await createScript(s, 'u/admin/talk', 'bun', 'export function main() { console.log("hello"); return 1 }');
    const id = await (await s.post(`${W()}/jobs/run/p/u/admin/talk`, {})).text();
    await waitForJob(s, id);
    const update = await expectDescribed(await s.fetch(`${W()}/jobs_u/getupdate/${id}?log_offset=0`), jobLogUpdateSchema, `get ${wsPath('/jobs_u/getupdate/{id}')}`);
    expect(update).toMatchObject({ running: false, completed: true });
  });

  it('of the console runs and of large uploads', async () => {
    await createScript(s, 'u/admin/run_me', 'bun', 'export function main() { return 1 }');
    const id = await (await s.post(`${W()}/jobs/run/p/u/admin/run_me`, {})).text();
    await waitForJob(s, id);
    const page = await expectDescribed(await s.fetch(`${W()}/jobs/runs?per_page=5`), runPageSchema, `get ${wsPath('/jobs/runs')}`);
    expect(page.runs.map((r: { id: string }) => r.id)).toContain(id);
    await expectDescribed(await s.post(`${W()}/jobs/queue/cancel_selection`, { ids: [id], reason: 'done already' }), bulkCancelSchema, `post ${wsPath('/jobs/queue/cancel_selection')}`);

    expect((await s.post(`${W()}/workspaces/edit_object_storage`, { enabled: true })).status).toBe(200);
    const bytes = new TextEncoder().encode('a,b\n1,2\n');
    const upload = await expectDescribed(await s.post(`${W()}/job_helpers/uploads/create`, { path: 'u/admin/run_me', size: bytes.length, filename: 'x.csv', content_type: 'text/csv' }), createdUploadSchema, `post ${wsPath('/job_helpers/uploads/create')}`, 201);
    // Locally the part URL is this API's (described); on AWS it is S3's, which answers the ETag header only.
    const put = await fetch(upload.parts[0].url, { method: 'PUT', body: bytes });
    const part = { part_number: 1, etag: put.headers.get('etag') };
    if (new URL(upload.parts[0].url).pathname.endsWith('/job_helpers/uploads/part')) {
      expect(await expectDescribed(put, uploadedPartSchema, `put ${wsPath('/job_helpers/uploads/part')}`)).toEqual(part);
    } else {
      expect(put.status).toBe(200);
      await put.body?.cancel();
    }
    await expectDescribed(await s.post(`${W()}/job_helpers/uploads/complete`, { upload: upload.upload, parts: [part] }), storedObjectSchema, `post ${wsPath('/job_helpers/uploads/complete')}`);
    // s3rver, the aws tier's S3, has no AbortMultipartUpload (it answers 405); S3 has.
    if (process.env.SVC_TEST_SHELL === 'aws') return;
    const other = await (await s.post(`${W()}/job_helpers/uploads/create`, { path: 'u/admin/run_me', size: 10 })).json();
    await expectDescribed(await s.post(`${W()}/job_helpers/uploads/abort`, { upload: other.upload }), abortedUploadSchema, `post ${wsPath('/job_helpers/uploads/abort')}`);
  });
});

/** Redelivers, again while the dispatcher holds the event for an attempt under way (409 says so). */
async function redeliver(url: string): Promise<Response> {
  for (let tries = 0; ; tries++) {
    const res = await s.fetch(url, { method: 'POST' });
    if (res.status !== 409 || tries === 50) return res;
    await res.body?.cancel();
  }
}

/** A URL the service signed, requested against the test server. */
const local = (url: string) => url.replace(/^https?:\/\/[^/]+/, '');

/** An API token of `username` (created by the admin above with a known password). */
async function tokenOf(username: string): Promise<string> {
  const login = await s.fetch('/api/auth/login', { method: 'POST', token: null, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: `${username}@example.com`, password: 'a long password' }) });
  expect(login.status).toBe(200);
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const res = await s.fetch('/api/users/tokens/create', { method: 'POST', token: null, headers: { cookie, 'content-type': 'application/json' }, body: JSON.stringify({ label: 'described' }) });
  expect(res.status).toBe(201);
  return res.text();
}

/** Runs the flow at `path` and reads its job until it reaches `status` (each read is a request; no timer). */
async function runUntil(path: string, status: string): Promise<Record<string, any>> {
  const id = await (await s.post(`${W()}/jobs/run/p/${path}`, {})).text();
  for (let reads = 0; reads < 5000; reads++) {
    const job = await (await s.fetch(`${W()}/jobs_u/get/${id}`)).json();
    if (job.status === status) return job;
    if (['success', 'failed', 'canceled'].includes(job.status)) throw new Error(`flow ${path} ended as ${job.status}: ${JSON.stringify(job.result)}`);
  }
  throw new Error(`flow ${path} never reached ${status}`);
}
