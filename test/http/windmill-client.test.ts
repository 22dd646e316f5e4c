import { createParser } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';

/**
 * Windmill's client libraries against svc (docs/windmill.md). The real `windmill-client` npm
 * package is driven from this process with the environment a running job has (its WM_* variables
 * and its job token, taken from a job that stays running meanwhile); the `wmill` Python client's
 * calls are replayed as its source sends them (the test machines reach no Python index); and
 * TypeScript and Python jobs read their WM_* variables.
 */

let s: TestServer;
let alice: string;
let holder: { env: Record<string, string>; events: AsyncGenerator<any>; jobId: string };

const ws = () => `/api/w/${s.workspace}`;
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function memberToken(username: string, role: string): Promise<string> {
  await s.post('/api/users/create', { username, email: `${username}@example.com`, password: `${username}-password` });
  await s.post(`${ws()}/workspaces/add_user`, { username, role });
  const login = await s.fetch('/api/auth/login', { ...json({ email: `${username}@example.com`, password: `${username}-password` }), token: null });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
  return (await s.fetch('/api/users/tokens/create', { ...json({ label: 'tests' }), token: null, headers: { cookie, 'content-type': 'application/json' } })).text();
}

/**
 * A job that hands its environment out on its result stream, then keeps running (so its token
 * stays valid) until the variable u/alice/release exists. Base64: the job's token as printed is
 * cut out of its logs and stream (docs/security.md), and the test acts with it as the job would.
 */
const HOLDER = `export async function* main() {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => /^(WM_|OV_|BASE_)/.test(k)));
  yield Buffer.from(JSON.stringify(env)).toString('base64') + '\\n';
  const h = { authorization: 'Bearer ' + process.env.WM_TOKEN };
  const url = process.env.BASE_INTERNAL_URL + '/api/w/' + process.env.WM_WORKSPACE + '/variables/exists/u/alice/release';
  while ((await (await fetch(url, { headers: h })).json()) !== true) await new Promise((r) => setTimeout(r, 50));
  return 'released';
}`;

const ENV_TS = `export function main() {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => /^(WM_|OV_|BASE_)/.test(k)));
}`;
const ENV_PY = `import os
def main():
    return {k: v for k, v in os.environ.items() if k.startswith(("WM_", "OV_", "BASE_"))}
`;

/** An approval step: it returns its own WM_* variables, then the flow waits for one approval. */
const STEP = `export function main() {
  const e = process.env;
  return { job: e.WM_JOB_ID, flow: e.WM_FLOW_JOB_ID, root: e.WM_ROOT_FLOW_JOB_ID, step: e.WM_FLOW_STEP_ID, state: e.WM_STATE_PATH, flowPath: e.WM_FLOW_PATH, same: e.WM_FLOW_JOB_ID === e.OV_FLOW_JOB_ID };
}`;

/** Reads SSE events one at a time, so the test can act while the stream stays open. */
async function* sseEvents(res: Response): AsyncGenerator<any> {
  const queue: any[] = [];
  const parser = createParser({ onEvent: (e) => queue.push(JSON.parse(e.data)) });
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    while (queue.length) yield queue.shift();
  }
}

async function startHolder(): Promise<typeof holder> {
  const res = await s.fetch(`${ws()}/jobs/run_and_stream/p/u/alice/holder`, { method: 'POST', token: alice });
  expect(res.status).toBe(200);
  const events = sseEvents(res);
  let text = '';
  let jobId = '';
  for await (const e of events) {
    jobId ||= e.job_id ?? e.id ?? '';
    text += e.new_result_stream ?? '';
    if (text.includes('\n')) break;
    if (e.completed) throw new Error(`the holder job ended early: ${JSON.stringify(e)}`);
  }
  const env = JSON.parse(Buffer.from(text.split('\n')[0], 'base64').toString('utf8')) as Record<string, string>;
  return { env, events, jobId: env.WM_JOB_ID };
}

// The default export: what `import wmill from 'windmill-client'` gives, with getResult and getResultMaybe too.
type Wmill = (typeof import('windmill-client'))['default'];
let wmill: Wmill;

beforeAll(async () => {
  s = await startServer();
  alice = await memberToken('alice', 'developer');
  await createScript(s, 'u/alice/holder', 'bun', HOLDER);
  await createScript(s, 'u/alice/double', 'bun', 'export function main(x: number) { return x * 2 }');
  await createScript(s, 'u/alice/logs', 'bun', 'export function main(x: number) { console.log("doubling " + x); return x * 2 }');
  await createScript(s, 'u/alice/boom', 'bun', 'export function main() { throw new Error("boom") }');
  await createScript(s, 'u/alice/env_ts', 'bun', ENV_TS);
  await createScript(s, 'u/alice/env_py', 'python3', ENV_PY);
  await createScript(s, 'u/admin/private', 'bun', 'export function main() { return 1 }');
  expect((await s.post(`${ws()}/variables/create`, { path: 'u/admin/secret', value: 'not for alice', is_secret: true })).status).toBe(201);
  const flow = { modules: [{ id: 'a', value: { type: 'script', path: 'u/alice/double', input_transforms: { x: { type: 'javascript', expr: 'flow_input.x' } } } }] };
  expect((await s.fetch(`${ws()}/flows/create`, { ...json({ path: 'u/alice/double_flow', value: flow }), token: alice })).status).toBe(201);

  holder = await startHolder();
  // What windmill-client reads when it is imported, as in a job.
  // The API's address is the job's own: inside the job network boundary its namespace's loopback,
  // which leads to the service only from inside; this process reaches the same API at s.url.
  const apiUrl = holder.env.BASE_INTERNAL_URL;
  for (const name of ['WM_TOKEN', 'WM_WORKSPACE', 'WM_JOB_ID', 'WM_ROOT_FLOW_JOB_ID', 'WM_FLOW_JOB_ID', 'WM_STATE_PATH', 'WM_BASE_URL', 'BASE_INTERNAL_URL', 'BASE_URL']) {
    process.env[name] = holder.env[name] === apiUrl ? s.url : holder.env[name];
  }
  // Loaded only now, as in a job: the package reads WM_TOKEN and BASE_INTERNAL_URL when it is imported.
  wmill = ((await import('windmill-client')) as unknown as { default: Wmill }).default;
});

afterAll(async () => {
  if (holder) {
    await s.post(`${ws()}/variables/create`, { path: 'u/alice/release', value: 'now' });
    for await (const e of holder.events) if (e.completed) break;
  }
  await s?.stop();
});

/** The admin's email as the instance has it (the instance-wide whoami of the admin token). */
async function adminEmail(): Promise<string> {
  return ((await (await s.fetch('/api/users/whoami')).json()) as { email: string }).email;
}

describe('the windmill-client package with a job\'s environment', () => {
  it('gives the job its WM_* variables with the values of its OV_* ones', () => {
    const e = holder.env;
    expect(e.WM_TOKEN).toBe(e.OV_TOKEN);
    expect(e.WM_WORKSPACE).toBe(s.workspace);
    expect(e.WM_JOB_ID).toBe(e.OV_JOB_ID);
    expect(e.WM_BASE_URL).toBe(e.BASE_INTERNAL_URL);
    expect(e.WM_STATE_PATH).toBe('u/alice/holder/user');
    expect(e.WM_FLOW_JOB_ID).toBe('');
    expect(e.WM_ROOT_FLOW_JOB_ID).toBe('');
    expect(e.WM_FLOW_STEP_ID).toBe('');
  });

  it('sets and gets variables, creating one on first set', async () => {
    expect(wmill.getWorkspace()).toBe(s.workspace);
    await wmill.setVariable('u/alice/greeting', 'hello');
    expect(await wmill.getVariable('u/alice/greeting')).toBe('hello');
    await wmill.setVariable('u/alice/greeting', 'hi again');
    expect(await wmill.getVariable('u/alice/greeting')).toBe('hi again');
    // Set through the job, seen by svc's own API.
    expect((await (await s.fetch(`${ws()}/variables/get/u/alice/greeting`, { token: alice })).json()).value).toBe('hi again');
  });

  it('refuses what the job\'s creator may not read, as svc\'s own routes do', async () => {
    await expect(wmill.getVariable('u/admin/secret')).rejects.toThrow(/Variable not found at u\/admin\/secret or not visible to you/);
    await expect(wmill.setVariable('u/admin/secret', 'overwritten')).rejects.toThrow();
    const secret = await (await s.fetch(`${ws()}/variables/get/u/admin/secret`)).json();
    expect(secret.value).toBe('not for alice');
    await expect(wmill.runScriptByPath('u/admin/private', {})).rejects.toThrow();
  });

  it('sets and gets resources, with $res: and `$var:` references resolved', async () => {
    await wmill.setResource({ region: 'eu', key: '$var:u/alice/greeting' }, 'u/alice/conf', 'any');
    expect(await wmill.getResource('u/alice/conf')).toEqual({ region: 'eu', key: 'hi again' });
    await wmill.setResource({ region: 'us' }, '$res:u/alice/conf');
    expect(await wmill.getResource('$res:u/alice/conf')).toEqual({ region: 'us' });
    const stored = await (await s.fetch(`${ws()}/resources/get/u/alice/conf`, { token: alice })).json();
    expect(stored).toMatchObject({ resource_type: 'any', value: { region: 'us' } });
    await expect(wmill.setResource({}, 'u/alice/nothing_here')).rejects.toThrow(/does not exist/);
  });

  it('keeps state at the job\'s state path between calls', async () => {
    expect(await wmill.getState()).toBeUndefined();
    await wmill.setState({ cursor: 1 });
    expect(await wmill.getState()).toEqual({ cursor: 1 });
    await wmill.setState({ cursor: 2 });
    expect(await wmill.getState()).toEqual({ cursor: 2 });
    const stored = await (await s.fetch(`${ws()}/resources/get/u/alice/holder/user`, { token: alice })).json();
    expect(stored).toMatchObject({ resource_type: 'state', value: { cursor: 2 } });
  });

  it('runs scripts and flows, waits for them and reads their results', async () => {
    expect(await wmill.runScriptByPath('u/alice/double', { x: 21 })).toBe(42);
    const id = await wmill.runScriptByPathAsync('u/alice/double', { x: 5 });
    expect(await wmill.waitJob(id)).toBe(10);
    expect(await wmill.getResult(id)).toBe(10);
    expect(await wmill.getResultMaybe(id)).toEqual({ completed: true, started: true, success: true, result: 10 });
    expect(await wmill.runFlow('u/alice/double_flow', { x: 4 })).toBe(8);
    await expect(wmill.runScriptByPath('u/alice/boom', {})).rejects.toThrow(/was not successful: .*boom/);
  });

  it('test-runs unsaved code and flows and waits for their results, as its JobService calls them (no path given)', async () => {
    const workspace = wmill.getWorkspace();
    const code = 'export function main(x: number) { return { doubled: x * 2 } }';
    expect(await wmill.JobService.runScriptPreviewAndWaitResult({ workspace, requestBody: { content: code, language: 'bun', args: { x: 21 } } })).toEqual({ doubled: 42 });
    const id = await wmill.JobService.runScriptPreview({ workspace, requestBody: { content: code, language: 'bun', args: { x: 2 }, kind: 'code', tag: undefined } });
    expect(await wmill.waitJob(id)).toEqual({ doubled: 4 });
    // Without a path, the run is in the caller's own folder (the job's creator: alice).
    expect((await (await s.fetch(`${ws()}/jobs_u/get/${id}`, { token: alice })).json()).script_path).toBe('u/alice/preview');
    const value = { modules: [{ id: 'a', value: { type: 'rawscript', language: 'bun', content: code, input_transforms: { x: { type: 'javascript', expr: 'flow_input.x' } } } }] };
    expect(await wmill.JobService.runFlowPreviewAndWaitResult({ workspace, requestBody: { value, args: { x: 5 } } as never })).toEqual({ doubled: 10 });
    // Nothing was saved at those paths.
    expect((await s.fetch(`${ws()}/scripts/get/p/u/alice/preview`, { token: alice })).status).toBe(404);
    expect((await s.fetch(`${ws()}/flows/get/u/alice/preview_flow`, { token: alice })).status).toBe(404);
  });

  it('answers the existence checks, name lists, completed jobs and logs its services ask for, as the caller may see them', async () => {
    const workspace = wmill.getWorkspace();
    expect(await wmill.ScriptService.existsScriptByPath({ workspace, path: 'u/alice/double' })).toBe(true);
    expect(await wmill.ScriptService.existsScriptByPath({ workspace, path: 'u/alice/nothing' })).toBe(false);
    expect(await wmill.FlowService.existsFlowByPath({ workspace, path: 'u/alice/double_flow' })).toBe(true);
    expect(await wmill.FlowService.existsFlowByPath({ workspace, path: 'u/alice/double' })).toBe(false);
    await expect(wmill.ScriptService.existsScriptByPath({ workspace, path: 'u/admin/private' })).rejects.toMatchObject({ status: 403 });
    const scripts = await wmill.ScriptService.listScriptPaths({ workspace });
    expect(scripts).toEqual(expect.arrayContaining(['u/alice/double', 'u/alice/holder']));
    expect(scripts).not.toContain('u/admin/private');
    expect(await wmill.FlowService.listFlowPaths({ workspace })).toContain('u/alice/double_flow');
    expect(await wmill.ResourceService.listResourceTypeNames({ workspace })).toEqual(expect.arrayContaining(['any', 'state']));
    expect(await wmill.UserService.listUsernames({ workspace })).toEqual(expect.arrayContaining(['admin', 'alice']));
    // FolderService is a named export only, as a script imports it.
    const { FolderService } = await import('windmill-client');
    expect(await FolderService.listFolderNames({ workspace })).toEqual(expect.any(Array));
    expect(await wmill.GroupService.listGroupNames({ workspace })).toEqual(expect.any(Array));
    // The job's creator as a member: a developer, in the groups and folders that name her.
    expect((await s.post(`${ws()}/groups/create`, { name: 'crew' })).status).toBe(201);
    expect((await s.post(`${ws()}/groups/adduser/crew`, { username: 'alice' })).status).toBe(200);
    expect((await s.post(`${ws()}/folders/create`, { name: 'shared', extra_perms: { 'g/crew': false } })).status).toBe(201);
    expect(await wmill.UserService.whoami({ workspace })).toMatchObject({
      username: 'alice', email: 'alice@example.com', is_admin: false, is_super_admin: false, operator: false, disabled: false,
      groups: ['crew'], folders: [], folders_read: ['shared'], folders_owners: [],
    });
    // Other members, as the job's creator may list them: the admin's email, and what whois and getUser show of them.
    expect(await wmill.usernameToEmail('admin')).toBe(await adminEmail());
    const admin = { username: 'admin', is_admin: true, operator: false, disabled: false, groups: [], folders: ['shared'], folders_owners: ['shared'] };
    expect(await wmill.UserService.whois({ workspace, username: 'admin' })).toMatchObject(admin);
    expect(await wmill.UserService.getUser({ workspace, username: 'admin' })).toMatchObject(admin);
    expect(await wmill.UserService.whois({ workspace, username: 'alice' })).toMatchObject({ username: 'alice', groups: ['crew'], folders_read: ['shared'], folders_owners: [] });
    // A user of the instance who is no member here is as unknown as a name nobody has.
    await s.post('/api/users/create', { username: 'outsider', email: 'outsider@example.com', password: 'outsider-password' });
    for (const username of ['outsider', 'nobody']) {
      await expect(wmill.usernameToEmail(username)).rejects.toMatchObject({ status: 404 });
      await expect(wmill.UserService.whois({ workspace, username })).rejects.toMatchObject({ status: 404 });
    }
    const script = await wmill.ScriptService.getScriptByPath({ workspace, path: 'u/alice/double' });
    expect(await wmill.ScriptService.getScriptDeploymentStatus({ workspace, hash: script.hash })).toEqual({ lock: script.lock ?? null, lock_error_logs: null });

    const id = await wmill.runScriptByPathAsync('u/alice/logs', { x: 3 });
    expect(await wmill.waitJob(id)).toBe(6);
    expect(await wmill.JobService.getCompletedJob({ workspace, id })).toMatchObject({ id, status: 'success', result: 6 });
    expect(await wmill.JobService.getJobLogs({ workspace, id })).toContain('doubling 3');
    const queue = await wmill.JobService.listQueue({ workspace });
    expect(queue.map((j) => j.id)).toContain(holder.jobId);
    expect(queue.map((j) => j.id)).not.toContain(id);
    expect((await wmill.JobService.listQueue({ workspace, running: false })).map((j) => j.id)).not.toContain(holder.jobId);
    const completed = await wmill.JobService.listCompletedJobs({ workspace, scriptPathExact: 'u/alice/logs' });
    expect(completed.map((j) => j.id)).toEqual([id]);
    expect(await wmill.JobService.listCompletedJobs({ workspace, scriptPathExact: 'u/alice/logs', success: false })).toEqual([]);
    // A filter svc does not have is named, not dropped.
    const filtered = await s.fetch(`${ws()}/jobs/queue/list?created_by=alice`);
    expect(filtered.status).toBe(400);
    expect(JSON.stringify(await filtered.json())).toContain('created_by');
    expect((await s.fetch(`${ws()}/jobs/completed/list?per_page=0`)).status).toBe(400);
    // The holder job still runs: it is not among the completed.
    await expect(wmill.JobService.getCompletedJob({ workspace, id: holder.jobId })).rejects.toMatchObject({ status: 404 });
    await expect(wmill.JobService.getJobLogs({ workspace, id: '01a2223f-b8e9-7602-acd0-6d33e7d04109' })).rejects.toMatchObject({ status: 404 });
  });

  it('finds the root job: the job itself outside a flow', async () => {
    expect(await wmill.getRootJobId()).toBe(holder.jobId);
  });

  it('hands out resume URLs that resume the flow, through svc\'s signed URLs', async () => {
    const flow = { modules: [{ id: 'ask', value: { type: 'rawscript', language: 'bun', content: STEP }, suspend: { required_events: 1 } }] };
    expect((await s.fetch(`${ws()}/flows/create`, { ...json({ path: 'u/alice/approve', value: flow }), token: alice })).status).toBe(201);
    const flowId = await (await s.fetch(`${ws()}/jobs/run/p/u/alice/approve`, { ...json({}), token: alice })).text();
    let job: any;
    for (;;) {
      job = await (await s.fetch(`${ws()}/jobs_u/get/${flowId}`, { token: alice })).json();
      if (job.status === 'suspended') break;
      expect(['queued', 'running']).toContain(job.status);
      await new Promise((r) => setTimeout(r, 50));
    }
    const step = job.flow_status.results.ask;
    expect(step).toMatchObject({ flow: flowId, root: flowId, step: 'ask', state: 'u/alice/approve/ask_user', flowPath: 'u/alice/approve', same: true });

    // The step's job has finished; the client asks with alice's own token on its behalf.
    wmill.setClient(alice, s.url);
    try {
      expect(await wmill.getRootJobId(step.job)).toBe(flowId);
      process.env.WM_JOB_ID = step.job;
      const urls = await wmill.getResumeUrls('alice');
      expect(urls.resume).toMatch(new RegExp(`/api/w/${s.workspace}/jobs_u/resume/${step.job}/\\d+/[0-9a-f]{64}\\?approver=alice$`));
      expect(Object.keys(urls).sort()).toEqual(['approvalPage', 'cancel', 'resume']);
      expect((await fetch(s.url + new URL(urls.resume).pathname + new URL(urls.resume).search)).status).toBe(200);
      expect((await waitForJob(s, flowId)).status).toBe('success');
    } finally {
      process.env.WM_JOB_ID = holder.env.WM_JOB_ID;
      wmill.setClient(holder.env.WM_TOKEN, s.url);
    }
  });
});

describe('the wmill Python client\'s requests, as its source sends them', () => {
  /** httpx with the client's headers, against `<BASE_INTERNAL_URL>/api`. */
  const py = (method: 'GET' | 'POST', endpoint: string, body?: unknown, params?: Record<string, string>) => {
    const query = params ? `?${new URLSearchParams(params)}` : '';
    return fetch(`${s.url}/api/${endpoint}${query}`, {
      method,
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${holder.env.WM_TOKEN}` },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  };
  const w = () => `w/${holder.env.WM_WORKSPACE}`;

  it('set_variable and get_variable', async () => {
    const path = 'u/alice/py_var';
    expect((await py('GET', `${w()}/variables/get/${path}`)).status).toBe(404);
    expect((await py('POST', `${w()}/variables/create`, { path, value: 'one', is_secret: false, description: '' })).status).toBe(201);
    expect(await (await py('GET', `${w()}/variables/get_value/${path}`)).json()).toBe('one');
    expect((await py('GET', `${w()}/variables/get/${path}`)).status).toBe(200);
    expect((await py('POST', `${w()}/variables/update/${path}`, { value: 'two' })).status).toBe(200);
    expect(await (await py('GET', `${w()}/variables/get_value/${path}`)).json()).toBe('two');
  });

  it('set_resource (type "any" by default), get_resource and the state', async () => {
    const path = 'u/alice/py_res';
    expect((await py('GET', `${w()}/resources/get/${path}`)).status).toBe(404);
    expect((await py('POST', `${w()}/resources/create`, { path, value: { a: 1 }, resource_type: 'any' })).status).toBe(201);
    expect((await py('POST', `${w()}/resources/update_value/${path}`, { value: { a: 2 } })).status).toBe(200);
    expect(await (await py('GET', `${w()}/resources/get_value_interpolated/${path}`)).json()).toEqual({ a: 2 });
    // set_state: set_resource at the state path with type "state".
    expect((await py('GET', `${w()}/resources/get/${holder.env.WM_STATE_PATH}`)).status).toBe(200);
    expect((await py('POST', `${w()}/resources/update_value/${holder.env.WM_STATE_PATH}`, { value: [1, 2] })).status).toBe(200);
    expect(await (await py('GET', `${w()}/resources/get_value_interpolated/${holder.env.WM_STATE_PATH}`)).json()).toEqual([1, 2]);
    // A missing value is refused and changes nothing.
    expect((await py('POST', `${w()}/resources/update_value/${path}`, {})).status).toBe(400);
    expect(await (await py('GET', `${w()}/resources/get_value_interpolated/${path}`)).json()).toEqual({ a: 2 });
  });

  it('run_script_async, wait_job, get_result, get_root_job_id and run_flow_async', async () => {
    const params = { parent_job: holder.env.WM_JOB_ID };
    const id = await (await py('POST', `${w()}/jobs/run/p/u/alice/double`, { x: 3 }, params)).text();
    let maybe: any;
    do maybe = await (await py('GET', `${w()}/jobs_u/completed/get_result_maybe/${id}`)).json();
    while (!maybe.completed);
    expect(maybe).toEqual({ completed: true, started: true, success: true, result: 6 });
    expect(await (await py('GET', `${w()}/jobs_u/completed/get_result/${id}`)).json()).toBe(6);
    expect(await (await py('GET', `${w()}/jobs_u/get_root_job_id/${holder.env.WM_JOB_ID}`)).json()).toBe(holder.env.WM_JOB_ID);

    const flowId = await (await py('POST', `${w()}/jobs/run/f/u/alice/double_flow`, { x: 7 })).text();
    expect((await waitForJob(s, flowId)).result).toBe(14);

    const failed = await (await py('POST', `${w()}/jobs/run/p/u/alice/boom`, {})).text();
    await waitForJob(s, failed);
    const bad = await (await py('GET', `${w()}/jobs_u/completed/get_result_maybe/${failed}`)).json();
    expect(bad).toMatchObject({ completed: true, success: false, result: { error: { message: expect.stringContaining('boom') } } });

    expect((await py('GET', `${w()}/jobs_u/completed/get_result_maybe/00000000-0000-0000-0000-000000000000`)).status).toBe(404);
    expect((await py('GET', `${w()}/jobs_u/get_root_job_id/not-a-job`)).status).toBe(404);
  });

  it('get_resume_urls for the running job', async () => {
    const res = await py('GET', `${w()}/jobs/resume_urls/${holder.env.WM_JOB_ID}/123456`, undefined, { approver: 'alice' });
    expect(res.status).toBe(200);
    expect(Object.keys(await res.json()).sort()).toEqual(['approvalPage', 'cancel', 'resume']);
  });
});

describe('WM_* variables inside jobs', () => {
  for (const [path, language] of [['u/alice/env_ts', 'TypeScript'], ['u/alice/env_py', 'Python']]) {
    it(`are those of the job in ${language}`, async () => {
      const id = await (await s.fetch(`${ws()}/jobs/run/p/${path}`, { ...json({}), token: alice })).text();
      const job = await waitForJob(s, id);
      expect(job.status).toBe('success');
      const e = job.result as Record<string, string>;
      expect(e).toMatchObject({ WM_WORKSPACE: s.workspace, WM_JOB_ID: id, WM_JOB_PATH: path, WM_USERNAME: 'alice', WM_PERMISSIONED_AS: 'u/alice', WM_STATE_PATH: `${path}/user`, WM_FLOW_JOB_ID: '', WM_ROOT_FLOW_JOB_ID: '' });
      expect(e.WM_TOKEN).toBe(e.OV_TOKEN);
      expect(e.WM_BASE_URL).toBe(e.BASE_INTERNAL_URL);
      expect(e.BASE_URL).toBe(e.BASE_INTERNAL_URL);
    });
  }
});
