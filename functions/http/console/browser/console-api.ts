import type { BulkCancelView, RunPageView } from '../../../core/views/run-views.js';
import type { JobWithFlowStatus } from '../../../core/views/job-view.js';
import type { FlowHistoryView, FlowValidationView, FlowView, InferredSchemaView, ScriptMetadataView, ScriptView } from '../../../core/views/item-views.js';
import type { CanceledStepView, ConsentOutcomeView, ResumeOutcomeView } from '../../../core/views/approval-views.js';
import type { JobLogUpdate } from '../../../core/jobs/job-log-update.js';
import type { TokenView } from '../../../core/views/identity-views.js';
import type { ChatConnectionListView, DeliveryView, WorkspaceSettingsView, WorkspaceWebhookView } from '../../../core/views/settings-views.js';
import type { FolderView, GroupView, ResourceTypeView, VariableView } from '../../../core/views/item-views.js';
import type { HttpTriggerView, ScheduleView } from '../../../core/views/trigger-views.js';
import type { MemberView } from '../../../core/views/identity-views.js';
import type { z } from 'zod';
import type { createBody as newSchedule, enabledBody } from '../../../core/triggers/schedules.js';
import type { createBody as newVariable, updateBody as variableChange } from '../../../core/workspace/variables.js';
import type { createBody as newResource } from '../../../core/workspace/resources.js';
import type { createBody as newResourceType } from '../../../core/workspace/resource-types.js';
import type { createBody as newRoute } from '../../../core/triggers/http-triggers.js';
import type { createFolderBody, updateFolderBody } from '../../../core/identity/folders.js';
import type { createGroupBody, memberBody } from '../../../core/identity/groups.js';
import type { addMemberBody, removeMemberBody, updateMemberBody } from '../../../core/identity/members.js';
import type { loginBody, tokenLoginBody } from '../../../core/identity/users.js';
import type { LoginView } from '../../../core/views/identity-views.js';
import type { generateBody as openApiSelection } from '../../../core/openapi/selection.js';
import type { GeneratedDocument } from '../../../core/openapi/generate.js';

/**
 * The API as the console's bundled pages call it, typed by the same views the OpenAPI document
 * and the CLI are built from (core/views/): a changed answer fails `npm run check` where a page
 * reads it. Same-origin requests with the login session; a lost session goes to the login page.
 */

/** A refused call: the API's message, and its status (a save's 409 is told apart). */
export class ApiCallError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** The workspace's API root, from the page's `data-workspace`. */
export function workspaceApi(): string {
  return '/api/w/' + encodeURIComponent(document.body.dataset.workspace ?? '');
}

/** A script or flow path in a URL: each segment encoded, the slashes kept. */
export const encodePath = (path: string) => path.split('/').map(encodeURIComponent).join('/');

/**
 * The response, once it is an answer: a refusal throws the API's message. A lost session (401) goes
 * to the login page and back, unless `signInOn401` is false (the login's own call, whose 401 is a
 * wrong password to show).
 */
async function respond(url: string, init?: RequestInit, signInOn401 = true): Promise<Response> {
  const res = await fetch(url, { credentials: 'same-origin', ...init });
  if (res.status === 401 && signInOn401) {
    location.assign('/login?next=' + encodeURIComponent(location.pathname + location.search));
    throw new ApiCallError('not signed in', 401);
  }
  if (!res.ok) {
    const refusal = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
    throw new ApiCallError(refusal?.error?.message || 'request failed (' + res.status + ')', res.status);
  }
  return res;
}

/** The answer as text (a job id, a hash) or parsed JSON; a refusal throws its message. */
async function send(url: string, init?: RequestInit, signInOn401 = true): Promise<unknown> {
  const text = await (await respond(url, init, signInOn401)).text();
  try {
    return JSON.parse(text);
  } catch {
    return text; // plain text answers (a job id, a hash)
  }
}

function call<T>(path: string, init?: RequestInit): Promise<T> {
  return send(workspaceApi() + path, init) as Promise<T>;
}

/** A JSON body; `trigger` is what the run list shows as having started a run this call starts (X-Svc-Trigger). */
function post(body: unknown, trigger?: string): RequestInit {
  return { method: 'POST', headers: { 'content-type': 'application/json', ...(trigger ? { 'x-svc-trigger': trigger } : {}) }, body: JSON.stringify(body) };
}

async function text(path: string, init?: RequestInit): Promise<string> {
  return String(await call<unknown>(path, init));
}

/** `GET jobs/runs`: a page of runs matching the query, and the next page's cursor. */
export function listRuns(query: URLSearchParams): Promise<RunPageView> {
  return call<RunPageView>('/jobs/runs?' + query.toString());
}

/** `GET jobs/runs_sse`: the first page of `listRuns` again whenever it changes, as `runs` events. */
export function followRuns(query: URLSearchParams, onPage: (page: RunPageView) => void): EventSource {
  const feed = new EventSource(workspaceApi() + '/jobs/runs_sse?' + query.toString());
  feed.addEventListener('runs', (event) => onPage(JSON.parse((event as MessageEvent<string>).data) as RunPageView));
  return feed;
}

/** `POST jobs/queue/cancel_selection`: cancels the runs it may, says why not for the others. */
export function cancelSelection(ids: string[]): Promise<BulkCancelView> {
  return call<BulkCancelView>('/jobs/queue/cancel_selection', post(ids));
}

/** `GET jobs_u/get/{id}`: a job, and a flow's run. */
export function getJob(id: string): Promise<JobWithFlowStatus> {
  return call<JobWithFlowStatus>('/jobs_u/get/' + encodeURIComponent(id));
}

/** `POST jobs_u/queue/cancel/{id}`. */
export function cancelJob(id: string): Promise<string> {
  return text('/jobs_u/queue/cancel/' + encodeURIComponent(id), { method: 'POST' });
}

/** What can be run: a saved script or flow by path, a script version by hash, a flow version. */
export type RunTarget = { script: string } | { flow: string } | { hash: string } | { flowVersion: string };

function runPath(target: RunTarget): string {
  if ('script' in target) return '/jobs/run/p/' + encodePath(target.script);
  if ('flow' in target) return '/jobs/run/f/' + encodePath(target.flow);
  if ('hash' in target) return '/jobs/run/h/' + encodeURIComponent(target.hash);
  return '/jobs/run/fv/' + encodeURIComponent(target.flowVersion);
}

/** `POST jobs/run/...`: queues a run; answers its job id. */
export function run(target: RunTarget, args: Record<string, unknown>, trigger: string): Promise<string> {
  return text(runPath(target), post(args, trigger));
}

/** `POST jobs/run/preview`: test-runs code that is not saved; answers the job id. */
export function previewScript(body: { path: string; language: string; content: string; args: Record<string, unknown> }): Promise<string> {
  return text('/jobs/run/preview', post(body, 'console'));
}

/** `POST jobs/run/preview_flow`: test-runs a flow that is not saved; answers the flow job's id. */
export function previewFlow(body: { path: string; value: unknown; schema?: unknown; args: Record<string, unknown> }): Promise<string> {
  return text('/jobs/run/preview_flow', post(body, 'console'));
}

/** `GET scripts/get/p/{path}`: the latest version. */
export function getScript(path: string): Promise<ScriptView> {
  return call<ScriptView>('/scripts/get/p/' + encodePath(path));
}

/** `GET scripts/get/h/{hash}`: one version. */
export function getScriptVersion(hash: string): Promise<ScriptView> {
  return call<ScriptView>('/scripts/get/h/' + encodeURIComponent(hash));
}

/** `POST scripts/create`: a new script, or a new version of `parent_hash`; answers the new hash (409: someone saved meanwhile). */
export function createScript(body: { path: string; language: string; content: string; summary: string; parent_hash: string | null; deployment_message?: string }): Promise<string> {
  return text('/scripts/create', post(body));
}

/** `POST scripts/infer_schema`: the input schema read from the code. */
export function inferSchema(body: { language: string; content: string }): Promise<InferredSchemaView> {
  return call<InferredSchemaView>('/scripts/infer_schema', post(body));
}

/** `POST scripts/generate_metadata`: the lock and schema a create would store. */
export function generateMetadata(body: { path: string; language: string; content: string }): Promise<ScriptMetadataView> {
  return call<ScriptMetadataView>('/scripts/generate_metadata', post(body));
}

/** `GET flows/get/{path}`: the latest version. */
export function getFlow(path: string): Promise<FlowView> {
  return call<FlowView>('/flows/get/' + encodePath(path));
}

/** `POST flows/validate`: the errors a save would answer, each with its step. */
export function validateFlow(body: unknown): Promise<FlowValidationView> {
  return call<FlowValidationView>('/flows/validate', post(body));
}

/** `POST flows/create`: answers the flow's path. */
export function createFlow(body: Record<string, unknown>): Promise<string> {
  return text('/flows/create', post(body));
}

/** `POST flows/update/{path}`: the new version. */
export function updateFlow(path: string, body: Record<string, unknown>): Promise<FlowView> {
  return call<FlowView>('/flows/update/' + encodePath(path), post(body));
}

/** `GET flows/history/p/{path}`: the versions, newest first. */
export function flowHistory(path: string): Promise<FlowHistoryView> {
  return call<FlowHistoryView>('/flows/history/p/' + encodePath(path));
}

/** `POST /api/v1/runs/{id}/consent`: a ConsentGate's decision. */
export function decideConsent(runId: string, decision: 'approved' | 'rejected', reason: string): Promise<ConsentOutcomeView> {
  return send('/api/v1/runs/' + encodeURIComponent(runId) + '/consent', post({ decision, reason })) as Promise<ConsentOutcomeView>;
}

/** An approval step's resume URL (signed for this person): approves with the form's values. */
export function approveStep(resumeUrl: string, values: Record<string, unknown>): Promise<ResumeOutcomeView> {
  return send(resumeUrl, post(values)) as Promise<ResumeOutcomeView>;
}

/** An approval step's cancel URL: rejects it. */
export function rejectStep(cancelUrl: string, reason: string): Promise<CanceledStepView> {
  return send(cancelUrl, post({ reason })) as Promise<CanceledStepView>;
}

/** `POST /api/auth/login`: a password, or an unrestricted API token; sets the session cookie. Its 401 (wrong password) is thrown, not sent to the login page. */
export function signIn(body: Body<typeof loginBody> | Body<typeof tokenLoginBody>): Promise<LoginView> {
  return send('/api/auth/login', post(body), false) as Promise<LoginView>;
}

/** `GET /api/users/tokens/list`: the signed-in person's tokens (prefixes, never the secrets). */
export function listTokens(): Promise<TokenView[]> {
  return send('/api/users/tokens/list') as Promise<TokenView[]>;
}

/** `POST /api/users/tokens/create`: answers the new token, shown once. */
export async function createToken(body: { label: string; expiration?: string; scopes?: string[] }): Promise<string> {
  return String(await send('/api/users/tokens/create', post(body)));
}

/** `DELETE /api/users/tokens/delete/{prefix}`. */
export async function deleteToken(prefix: string): Promise<void> {
  await send('/api/users/tokens/delete/' + encodeURIComponent(prefix), { method: 'DELETE' });
}

/** `GET workspaces/get_settings`: the workspace, and to its admins its events webhook (never the secret). */
export function workspaceSettings(): Promise<WorkspaceSettingsView> {
  return call<WorkspaceSettingsView>('/workspaces/get_settings');
}

/** `POST workspaces/edit_webhook`: the webhook as saved and whether it signs. */
export function editWebhook(body: { webhook: string; secret?: string }): Promise<WorkspaceWebhookView> {
  return call<WorkspaceWebhookView>('/workspaces/edit_webhook', post(body));
}

/** `GET workspaces/webhook_deliveries`: recent deliveries of workspace events, newest first. */
export function webhookDeliveries(): Promise<DeliveryView[]> {
  return call<DeliveryView[]>('/workspaces/webhook_deliveries');
}

/** `POST workspaces/webhook_deliveries/{id}/redeliver`. */
export function redeliver(id: string): Promise<DeliveryView> {
  return call<DeliveryView>('/workspaces/webhook_deliveries/' + encodeURIComponent(id) + '/redeliver', { method: 'POST' });
}

/** `GET workspaces/chat_connections`: the workspace's Slack and Teams connections (no secrets). */
export function chatConnections(): Promise<ChatConnectionListView> {
  return call<ChatConnectionListView>('/workspaces/chat_connections');
}

/** `POST workspaces/chat_connections/{name}`: creates or replaces a connection. */
export async function setChatConnection(name: string, body: Record<string, unknown>): Promise<void> {
  await call<unknown>('/workspaces/chat_connections/' + encodeURIComponent(name), post(body));
}

/** `DELETE workspaces/chat_connections/{name}`. */
export async function deleteChatConnection(name: string): Promise<void> {
  await call<unknown>('/workspaces/chat_connections/' + encodeURIComponent(name), { method: 'DELETE' });
}

/*
 * What a workspace holds (the holdings pages' forms and buttons): each request typed by the zod
 * schema the API validates it with (what it accepts before defaults), each answer by its view.
 */

/** A request body as the API's schema accepts it. */
type Body<S extends z.ZodType> = z.input<S>;
const del = { method: 'DELETE' } as const;

/** `POST schedules/create`. */
export const createSchedule = (body: Body<typeof newSchedule>) => call<ScheduleView>('/schedules/create', post(body));
/** `POST schedules/setenabled/{path}`. */
export const setScheduleEnabled = (path: string, body: Body<typeof enabledBody>) => call<ScheduleView>('/schedules/setenabled/' + encodePath(path), post(body));
/** `DELETE schedules/delete/{path}`: answers what it deleted, as text. */
export const deleteSchedule = (path: string) => text('/schedules/delete/' + encodePath(path), del);

/** `POST variables/create`: answers the variable's path. */
export const createVariable = (body: Body<typeof newVariable>) => text('/variables/create', post(body));
/** `POST variables/update/{path}`: the variable, never a secret's value. */
export const updateVariable = (path: string, body: Body<typeof variableChange>) => call<VariableView>('/variables/update/' + encodePath(path), post(body));
/** `DELETE variables/delete/{path}`. */
export const deleteVariable = (path: string) => text('/variables/delete/' + encodePath(path), del);

/** `POST resources/create`: answers the connection's path. */
export const createResource = (body: Body<typeof newResource>) => text('/resources/create', post(body));
/** `DELETE resources/delete/{path}`. */
export const deleteResource = (path: string) => text('/resources/delete/' + encodePath(path), del);
/** `POST resources/type/create`. */
export const createResourceType = (body: Body<typeof newResourceType>) => call<ResourceTypeView>('/resources/type/create', post(body));

/** `POST http_triggers/create`. */
export const createRoute = (body: Body<typeof newRoute>) => call<HttpTriggerView>('/http_triggers/create', post(body));
/** `DELETE http_triggers/delete/{path}`. */
export const deleteRoute = (path: string) => text('/http_triggers/delete/' + encodePath(path), del);

/** `POST folders/create`. */
export const createFolder = (body: Body<typeof createFolderBody>) => call<FolderView>('/folders/create', post(body));
/** `POST folders/update/{name}`. */
export const updateFolder = (name: string, body: Body<typeof updateFolderBody>) => call<FolderView>('/folders/update/' + encodeURIComponent(name), post(body));
/** `DELETE folders/delete/{name}`. */
export const deleteFolder = (name: string) => text('/folders/delete/' + encodeURIComponent(name), del);

/** `POST groups/create`. */
export const createGroup = (body: Body<typeof createGroupBody>) => call<GroupView>('/groups/create', post(body));
/** `POST groups/adduser/{name}`: the group with its members. */
export const addGroupMember = (name: string, body: Body<typeof memberBody>) => call<GroupView>('/groups/adduser/' + encodeURIComponent(name), post(body));
/** `POST groups/removeuser/{name}`. */
export const removeGroupMember = (name: string, body: Body<typeof memberBody>) => call<GroupView>('/groups/removeuser/' + encodeURIComponent(name), post(body));
/** `DELETE groups/delete/{name}`. */
export const deleteGroup = (name: string) => text('/groups/delete/' + encodeURIComponent(name), del);

/** `POST workspaces/add_user`: the membership. */
export const addMember = (body: Body<typeof addMemberBody>) => call<MemberView>('/workspaces/add_user', post(body));
/** `POST users/update/{username}`: the membership with its new role. */
export const updateMember = (username: string, body: Body<typeof updateMemberBody>) => call<MemberView>('/users/update/' + encodeURIComponent(username), post(body));
/** `POST workspaces/remove_user`. */
export const removeMember = (body: Body<typeof removeMemberBody>) => text('/workspaces/remove_user', post(body));

/** A generated OpenAPI document as the page shows and downloads it. */
export type OpenApiDocument = Pick<GeneratedDocument, 'text' | 'contentType'>;

/** `POST openapi/generate`: the document as text (JSON or YAML, as `format` asks) and its media type. */
export async function generateOpenApi(body: Body<typeof openApiSelection>): Promise<OpenApiDocument> {
  const res = await respond(workspaceApi() + '/openapi/generate', post(body));
  return { text: await res.text(), contentType: res.headers.get('content-type') ?? 'application/octet-stream' };
}

/*
 * The console's own routes beside its pages (console/pages.ts), for what the API answers in
 * another form: a job's new logs as coloured HTML, the runs inside a flow's loops and branches.
 */

const consoleRun = (id: string) => '/w/' + encodeURIComponent(document.body.dataset.workspace ?? '') + '/run/' + encodeURIComponent(id);

/** `jobs_u/getupdate/{id}` with the new logs as HTML, every character escaped but ANSI colours. */
export function logUpdate(id: string, offset: number): Promise<JobLogUpdate & { html: string }> {
  return send(consoleRun(id) + '/logs?log_offset=' + offset) as Promise<JobLogUpdate & { html: string }>;
}

/** The runs of a flow's loops and branches, nested ones too, each as `getJob` answers it. */
export function subflowRuns(id: string): Promise<JobWithFlowStatus[]> {
  return send(consoleRun(id) + '/subflows') as Promise<JobWithFlowStatus[]>;
}

/** A run's approve / reject form for this person (console/approval-fragment.ts), as HTML, or nothing. */
export async function approvalForm(id: string): Promise<string> {
  const res = await fetch(consoleRun(id) + '/approval', { credentials: 'same-origin' });
  return res.ok ? await res.text() : '';
}
