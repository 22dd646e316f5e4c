// svc-client: what a running job needs from the svc API. Every job finds this package without an
// install step (the runner puts it beside the script). Plain JavaScript with no dependencies, so
// it runs as shipped on any Node with fetch, locally and in the sandbox Lambda.
//
// The environment is read on every call, never cached: a warm process serves many jobs, each
// with its own token, workspace and ids.

/** A non-2xx answer of the API. `status` is the HTTP status; the message never holds the token. */
export class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

/** The value of the resource at `path`, with any `$var:` references inside it resolved. */
export async function getResource(path) {
  const route = `resources/get_value_interpolated/${encodePath(stripPrefix(path, '$res:', 'getResource'))}`;
  return apiGet(route, `getResource(${JSON.stringify(path)})`);
}

/** The value of the variable at `path` (secret variables come back decrypted). */
export async function getVariable(path) {
  const what = `getVariable(${JSON.stringify(path)})`;
  const body = await apiGet(`variables/get/${encodePath(stripPrefix(path, '$var:', 'getVariable'))}`, what);
  if (body === null || typeof body !== 'object' || !('value' in body)) {
    throw new Error(`svc-client: ${what}: the API answered without a value`);
  }
  return body.value;
}

/**
 * Resume and cancel URLs for this job as an approval step (spec 4.8, 4.9), plus its approval page.
 * Each call makes a fresh resume id, so each URL handed out counts as one approval. `approver`
 * names who the URL is meant for (shown as the approver unless someone logs in). With `flowLevel`
 * the URLs are pre-approvals of the flow, counted by any later suspend step of it.
 */
export async function getResumeUrls(approver, flowLevel = false) {
  const resumeId = Math.floor(Math.random() * 2 ** 32);
  const params = new URLSearchParams({ ...(approver ? { approver } : {}), ...(flowLevel ? { flow_level: 'true' } : {}) }).toString();
  const query = params ? `?${params}` : '';
  return apiGet(`jobs/resume_urls/${encodeURIComponent(required('OV_JOB_ID'))}/${resumeId}${query}`, 'getResumeUrls()');
}

/**
 * Asks for this approval step's decision in a Slack channel (spec 4.9): the service posts `message`
 * with Approve / Reject buttons through the workspace's Slack chat connection named
 * `chatResourcePath`, which a workspace admin sets up (the job never sees its token). Approve opens the step's form in a modal, prefilled from `defaultArgsJson`, with
 * the choices of `dynamicEnumsJson`. Each call is one approval of its own: call it once per channel
 * to require several. `approver` (a username or email) limits who may decide. Returns the message's
 * `ts` and `posted`, and the step's resume URLs, which still work if posting failed.
 */
export async function requestInteractiveChatApproval({ chatResourcePath, channelId, message, approver, defaultArgsJson, dynamicEnumsJson } = {}) {
  const body = {
    chat_resource_path: stripPrefix(chatResourcePath, '$res:', 'requestInteractiveChatApproval'),
    channel_id: channelId,
    message,
    ...(approver ? { approver } : {}),
    ...(defaultArgsJson ? { default_args_json: defaultArgsJson } : {}),
    ...(dynamicEnumsJson ? { dynamic_enums_json: dynamicEnumsJson } : {}),
  };
  return apiPost(`chat/slack/request_approval/${encodeURIComponent(required('OV_JOB_ID'))}`, body, 'requestInteractiveChatApproval()');
}

/**
 * The same in Microsoft Teams (spec 4.9, the second chat app): the service posts an Adaptive Card
 * with the step's form and Approve / Reject to the channel `channelName` of the team `teamName`
 * (the `teams` connection the job may read whose `team_name` is `teamName`). Returns as
 * requestInteractiveChatApproval does.
 */
export async function requestInteractiveCollabApproval({ teamName, channelName, message, approver, defaultArgsJson, dynamicEnumsJson } = {}) {
  const body = {
    team_name: teamName,
    channel_name: channelName,
    message,
    ...(approver ? { approver } : {}),
    ...(defaultArgsJson ? { default_args_json: defaultArgsJson } : {}),
    ...(dynamicEnumsJson ? { dynamic_enums_json: dynamicEnumsJson } : {}),
  };
  return apiPost(`chat/teams/request_approval/${encodeURIComponent(required('OV_JOB_ID'))}`, body, 'requestInteractiveCollabApproval()');
}

/**
 * The basic variant (spec 4.9): posts `text` and the Adaptive Card `cardBlock` to the Teams
 * conversation `conversationId`, with a button opening this approval step's approval page (no
 * callback: the page decides). Uses the one `teams` connection the job may read.
 */
export async function sendMessageToConversation({ conversationId, text, cardBlock } = {}) {
  const body = { conversation_id: conversationId, text: text ?? '', ...(cardBlock ? { card_block: cardBlock } : {}) };
  return apiPost(`chat/teams/send_message/${encodeURIComponent(required('OV_JOB_ID'))}`, body, 'sendMessageToConversation()');
}

/**
 * The bytes of a file a multipart webhook stored for this job: pass the argument's entry
 * (`{s3, filename, ...}`) or its `s3` key. Readable by whoever may read the jobs of the script or
 * flow that received it.
 */
export async function downloadFile(file) {
  const key = typeof file === 'string' ? file : file?.s3;
  if (typeof key !== 'string' || key === '') throw new TypeError('svc-client: downloadFile needs an uploaded file ({s3: ...}) or its s3 key');
  const what = `downloadFile(${JSON.stringify(key)})`;
  const response = await apiFetch(`job_helpers/download_s3_file?file_key=${encodeURIComponent(key)}`, what, 'application/octet-stream', { redirect: 'manual' });
  if (!isRedirect(response.status)) return new Uint8Array(await response.arrayBuffer());
  // On AWS the API answers with a presigned S3 URL: fetched without the token (S3 would refuse two credentials).
  const stored = await fetch(response.headers.get('location'));
  if (!stored.ok) throw new ApiError(`svc-client: ${what} failed with status ${stored.status} from storage: ${errorMessage(await stored.text(), stored.statusText)}`, stored.status);
  return new Uint8Array(await stored.arrayBuffer());
}

/**
 * Uploads a file of any size (up to the instance's upload limit) for the script or flow at `path`,
 * and returns the object to name in its webhook payload (`{files: [object]}`): the job receives it
 * as it would a multipart file. `data` is a Uint8Array, a string or a Blob; for a file on disk pass
 * `await fs.openAsBlob(file)`, read part by part as it is sent. The parts go straight to storage
 * (S3 presigned URLs on AWS); a failed upload is aborted.
 */
/**
 * A URL the API handed out on its own `/api/` paths (a local upload's part URLs) is reached the
 * way the job reaches the API, through BASE_INTERNAL_URL: behind the job network boundary the
 * service's own address is not reachable. Other URLs (S3 presigned ones) are left as they are.
 */
function serviceUrl(url) {
  const parsed = new URL(url);
  if (!parsed.pathname.startsWith('/api/')) return url;
  return `${required('BASE_INTERNAL_URL').replace(/\/+$/, '')}${parsed.pathname}${parsed.search}`;
}

export async function uploadFile(path, data, { filename, contentType } = {}) {
  const blob = data instanceof Blob ? data : new Blob([data]);
  const what = `uploadFile(${JSON.stringify(path)})`;
  const type = (contentType ?? blob.type ?? '').split(';')[0].trim() || 'application/octet-stream';
  const created = await apiPost('job_helpers/uploads/create', { path, size: blob.size, content_type: type, ...(filename ? { filename } : {}) }, what);
  try {
    const parts = [];
    for (const { part_number: n, url } of created.parts) {
      const body = blob.slice((n - 1) * created.part_size, n * created.part_size);
      // No token: the part URL is its own credential (and S3 would refuse a second one).
      const response = await fetch(serviceUrl(url), { method: 'PUT', body });
      if (!response.ok) throw new ApiError(`svc-client: ${what}: part ${n} failed with status ${response.status}: ${errorMessage(await response.text(), response.statusText)}`, response.status);
      parts.push({ part_number: n, etag: response.headers.get('etag') });
    }
    return await apiPost('job_helpers/uploads/complete', { upload: created.upload, parts }, what);
  } catch (error) {
    await apiPost('job_helpers/uploads/abort', { upload: created.upload }, what).catch(() => {});
    throw error;
  }
}

/** Who and where this job is; a variable the job was not given is null. */
export function getContext() {
  const env = (name) => process.env[name] ?? null;
  return {
    workspace: env('OV_WORKSPACE'),
    jobId: env('OV_JOB_ID'),
    jobPath: env('OV_JOB_PATH'),
    username: env('OV_USERNAME'),
    flowJobId: env('OV_FLOW_JOB_ID'),
    flowPath: env('OV_FLOW_PATH'),
    rootFlowJobId: env('OV_ROOT_FLOW_JOB_ID'),
    baseUrl: env('BASE_INTERNAL_URL'),
  };
}

/** Windmill's clients accept `$res:u/x/y` as well as `u/x/y`, so a bound argument can be passed on. */
function stripPrefix(path, prefix, fn) {
  if (typeof path !== 'string' || path === '') throw new TypeError(`svc-client: ${fn} needs a path such as "u/alice/db"`);
  return path.startsWith(prefix) ? path.slice(prefix.length) : path;
}

/** Each segment on its own, so the slashes of `f/folder/name` stay separators. */
function encodePath(path) {
  return path.split('/').map(encodeURIComponent).join('/');
}

function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`svc-client: ${name} is not set; the client works inside a svc job, which is given it`);
  return value;
}

async function apiFetch(route, what, accept, init = {}) {
  const base = required('BASE_INTERNAL_URL').replace(/\/+$/, '');
  const url = `${base}/api/w/${encodeURIComponent(required('OV_WORKSPACE'))}/${route}`;
  const token = required('OV_TOKEN');
  let response;
  try {
    response = await fetch(url, { ...init, headers: { Authorization: `Bearer ${token}`, Accept: accept, ...init.headers } });
  } catch (error) {
    // fetch says only "fetch failed"; the reason (refused, DNS, reset) is in its cause.
    const reason = error?.cause?.message ?? error?.message ?? String(error);
    throw new Error(`svc-client: ${what}: could not reach ${base}: ${reason}`, { cause: error });
  }
  if (!response.ok && !(init.redirect === 'manual' && isRedirect(response.status))) {
    const text = await response.text();
    throw new ApiError(`svc-client: ${what} failed with status ${response.status}: ${errorMessage(text, response.statusText)}`, response.status);
  }
  return response;
}

function isRedirect(status) {
  return status >= 300 && status < 400;
}

async function apiGet(route, what) {
  return parseJson(await (await apiFetch(route, what, 'application/json')).text(), what);
}

async function apiPost(route, body, what) {
  const init = { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
  return parseJson(await (await apiFetch(route, what, 'application/json', init)).text(), what);
}

function parseJson(text, what) {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`svc-client: ${what}: the API answered something that is not JSON`);
  }
}

/** The API answers errors as {"error": {"code", "message"}}; anything else is shown briefly. */
function errorMessage(text, statusText) {
  try {
    const message = JSON.parse(text)?.error?.message;
    if (typeof message === 'string') return message;
  } catch {
    // not JSON: a proxy's page, say
  }
  return text.trim().slice(0, 200) || statusText || 'no message';
}
