import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { apiError, startFakeApi, type FakeApi } from './fake-api.js';

// The shipped file itself, as a script imports it; its types come from the index.d.ts beside it.
type SvcClient = typeof import('../../../clients/ts/svc-client/index.js');
const svc = (await import(new URL('../../../clients/ts/svc-client/index.mjs', import.meta.url).href)) as SvcClient;

const TOKEN = 'svc_job_token_SECRET_1';
const JOB_ENV_KEYS = [
  'OV_TOKEN', 'OV_WORKSPACE', 'BASE_INTERNAL_URL', 'OV_JOB_ID', 'OV_JOB_PATH', 'OV_USERNAME', 'OV_FLOW_JOB_ID', 'OV_FLOW_PATH',
  'OV_ROOT_FLOW_JOB_ID',
];

let api: FakeApi;
const saved = new Map<string, string | undefined>();

/** The job's environment, as the shim sets it for each job of a warm process. */
function setJobEnv(env: Record<string, string>): void {
  for (const key of JOB_ENV_KEYS) delete process.env[key];
  Object.assign(process.env, env);
}

beforeAll(async () => {
  api = await startFakeApi();
  for (const key of JOB_ENV_KEYS) saved.set(key, process.env[key]);
});
afterAll(async () => {
  for (const [key, value] of saved) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  await api.close();
});
beforeEach(() => setJobEnv({ OV_TOKEN: TOKEN, OV_WORKSPACE: 'main', BASE_INTERNAL_URL: api.baseUrl }));
afterEach(() => {
  api.requests.length = 0;
  api.routes.clear();
});

describe('svc-client getResource', () => {
  it('GETs the interpolated value with the job token and returns it', async () => {
    const value = { host: 'db.internal', port: 5432, password: 'resolved-from-var' };
    api.routes.set('/api/w/main/resources/get_value_interpolated/u/alice/db', { status: 200, body: value });
    expect(await svc.getResource('u/alice/db')).toEqual(value);
    expect(api.requests).toEqual([
      { method: 'GET', url: '/api/w/main/resources/get_value_interpolated/u/alice/db', authorization: `Bearer ${TOKEN}` },
    ]);
  });

  it('encodes each path segment and the workspace, keeps the slashes, and accepts $res:', async () => {
    setJobEnv({ OV_TOKEN: TOKEN, OV_WORKSPACE: 'my ws', BASE_INTERNAL_URL: `${api.baseUrl}/` });
    api.routes.set('/api/w/my%20ws/resources/get_value_interpolated/f/team%20a/db%3F%23%25', { status: 200, body: [1, 'two'] });
    expect(await svc.getResource('$res:f/team a/db?#%')).toEqual([1, 'two']);
    expect(api.requests[0]?.url).toBe('/api/w/my%20ws/resources/get_value_interpolated/f/team%20a/db%3F%23%25');
  });

  it.each([
    [403, 'forbidden', 'u/alice/db is not readable by bob'],
    [404, 'not_found', 'resource u/alice/db not found'],
  ])('throws on %i with the status and the API message, never the token', async (status, code, message) => {
    api.routes.set('/api/w/main/resources/get_value_interpolated/u/alice/db', apiError(status, code, message));
    const error = await svc.getResource('u/alice/db').then(
      () => expect.unreachable('expected a rejection'),
      (e: unknown) => e as InstanceType<SvcClient['ApiError']>,
    );
    expect(error).toBeInstanceOf(svc.ApiError);
    expect(error.status).toBe(status);
    expect(error.message).toContain(String(status));
    expect(error.message).toContain(message);
    expect(error.message).not.toContain(TOKEN);
    expect(error.stack ?? '').not.toContain(TOKEN);
  });

  it('shows an error body that is not the API shape briefly', async () => {
    api.routes.set('/api/w/main/resources/get_value_interpolated/u/alice/db', { status: 502, body: '<html>bad gateway</html>' });
    await expect(svc.getResource('u/alice/db')).rejects.toThrow(/502: <html>bad gateway<\/html>/);
  });
});

describe('svc-client getVariable', () => {
  it('returns the value field of the answer', async () => {
    api.routes.set('/api/w/main/variables/get/u/alice/api_key', { status: 200, body: { path: 'u/alice/api_key', value: 's3cr3t', is_secret: true } });
    expect(await svc.getVariable('u/alice/api_key')).toBe('s3cr3t');
    expect(await svc.getVariable('$var:u/alice/api_key')).toBe('s3cr3t');
    expect(api.requests.map((r) => [r.method, r.url, r.authorization])).toEqual([
      ['GET', '/api/w/main/variables/get/u/alice/api_key', `Bearer ${TOKEN}`],
      ['GET', '/api/w/main/variables/get/u/alice/api_key', `Bearer ${TOKEN}`],
    ]);
  });

  it('throws on 404 with the API message', async () => {
    await expect(svc.getVariable('u/alice/missing')).rejects.toThrow(/404: nothing at \/api\/w\/main\/variables\/get\/u\/alice\/missing/);
  });

  it('reads the environment on every call: a warm process runs jobs of other tokens and workspaces', async () => {
    api.routes.set('/api/w/main/variables/get/u/a/v', { status: 200, body: { value: 'one' } });
    api.routes.set('/api/w/other/variables/get/u/a/v', { status: 200, body: { value: 'two' } });
    expect(await svc.getVariable('u/a/v')).toBe('one');
    setJobEnv({ OV_TOKEN: 'second-token', OV_WORKSPACE: 'other', BASE_INTERNAL_URL: api.baseUrl });
    expect(await svc.getVariable('u/a/v')).toBe('two');
    expect(api.requests.map((r) => [r.url, r.authorization])).toEqual([
      ['/api/w/main/variables/get/u/a/v', `Bearer ${TOKEN}`],
      ['/api/w/other/variables/get/u/a/v', 'Bearer second-token'],
    ]);
  });

  it('says which variable is missing outside a job, and refuses an empty path', async () => {
    setJobEnv({ OV_WORKSPACE: 'main', BASE_INTERNAL_URL: api.baseUrl });
    await expect(svc.getVariable('u/a/v')).rejects.toThrow(/OV_TOKEN is not set/);
    await expect(svc.getVariable('')).rejects.toThrow(TypeError);
    expect(api.requests).toEqual([]);
  });

  it('says the API could not be reached, naming the address', async () => {
    setJobEnv({ OV_TOKEN: TOKEN, OV_WORKSPACE: 'main', BASE_INTERNAL_URL: 'http://127.0.0.1:1' });
    const rejection = svc.getVariable('u/a/v');
    await expect(rejection).rejects.toThrow(/could not reach http:\/\/127\.0\.0\.1:1/);
    await expect(rejection).rejects.not.toThrow(TOKEN);
  });

  it('keeps the network error as the cause, for a script that wants the details', async () => {
    setJobEnv({ OV_TOKEN: TOKEN, OV_WORKSPACE: 'main', BASE_INTERNAL_URL: 'http://127.0.0.1:1' });
    const error: unknown = await svc.getVariable('u/a/v').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).cause).toBeInstanceOf(TypeError); // fetch's own "fetch failed"
  });
});

describe('svc-client getContext', () => {
  it('reads the job env, absent ones as null', () => {
    setJobEnv({
      OV_TOKEN: TOKEN, OV_WORKSPACE: 'main', BASE_INTERNAL_URL: api.baseUrl, OV_JOB_ID: 'job-1', OV_JOB_PATH: 'u/alice/script',
      OV_USERNAME: 'alice',
    });
    expect(svc.getContext()).toEqual({
      workspace: 'main', jobId: 'job-1', jobPath: 'u/alice/script', username: 'alice', flowJobId: null, flowPath: null,
      rootFlowJobId: null, baseUrl: api.baseUrl,
    });
    setJobEnv({ OV_FLOW_JOB_ID: 'flow-1', OV_FLOW_PATH: 'f/x/flow', OV_ROOT_FLOW_JOB_ID: 'root-1' });
    expect(svc.getContext()).toMatchObject({ workspace: null, flowJobId: 'flow-1', flowPath: 'f/x/flow', rootFlowJobId: 'root-1' });
  });
});
