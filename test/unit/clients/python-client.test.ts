import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { apiError, startFakeApi, type FakeApi } from './fake-api.js';

const run = promisify(execFile);
const CLIENTS_DIR = fileURLToPath(new URL('../../../clients/python/', import.meta.url));
const TOKEN = 'svc_job_token_SECRET_2';

// Runs calls of the real `svc` package in one python3 process, each with its own environment
// (as jobs of a warm process get), and prints what each returned or raised.
const DRIVER = `
import json, os, sys
sys.path.insert(0, sys.argv[1])
import svc
out = []
for call in json.loads(sys.argv[2]):
    os.environ.clear()
    os.environ.update(call["env"])
    try:
        out.append({"ok": getattr(svc, call["fn"])(*call["args"])})
    except Exception as error:
        out.append({"error": type(error).__name__, "message": str(error), "status": getattr(error, "status", None)})
print(json.dumps(out))
`;

interface Call {
  fn: 'get_resource' | 'get_variable' | 'get_context';
  args?: unknown[];
  env?: Record<string, string>;
}
type Outcome = { ok: unknown } | { error: string; message: string; status: number | null };

let api: FakeApi;
const jobEnv = () => ({ OV_TOKEN: TOKEN, OV_WORKSPACE: 'main', BASE_INTERNAL_URL: api.baseUrl });

/** Async on purpose: the fake API answers on this process's event loop while python3 waits. */
async function py(...calls: Call[]): Promise<Outcome[]> {
  const spec = calls.map((c) => ({ fn: c.fn, args: c.args ?? [], env: c.env ?? jobEnv() }));
  const { stdout } = await run('python3', ['-B', '-c', DRIVER, CLIENTS_DIR, JSON.stringify(spec)], { env: { PATH: process.env.PATH ?? '' } });
  return JSON.parse(stdout) as Outcome[];
}

beforeAll(async () => {
  api = await startFakeApi();
});
afterAll(() => api.close());
afterEach(() => {
  api.requests.length = 0;
  api.routes.clear();
});

describe('svc (Python) get_resource', () => {
  it('GETs the interpolated value with the job token and returns it', async () => {
    const value = { host: 'db.internal', port: 5432 };
    api.routes.set('/api/w/main/resources/get_value_interpolated/u/alice/db', { status: 200, body: value });
    expect(await py({ fn: 'get_resource', args: ['u/alice/db'] })).toEqual([{ ok: value }]);
    expect(api.requests).toEqual([
      { method: 'GET', url: '/api/w/main/resources/get_value_interpolated/u/alice/db', authorization: `Bearer ${TOKEN}` },
    ]);
  });

  it('encodes each path segment and the workspace, keeps the slashes, and accepts $res:', async () => {
    api.routes.set('/api/w/my%20ws/resources/get_value_interpolated/f/team%20a/db%3F%23%25', { status: 200, body: [1, 'two'] });
    const env = { ...jobEnv(), OV_WORKSPACE: 'my ws', BASE_INTERNAL_URL: `${api.baseUrl}/` };
    expect(await py({ fn: 'get_resource', args: ['$res:f/team a/db?#%'], env })).toEqual([{ ok: [1, 'two'] }]);
  });

  it('raises ApiError on 403 and 404 with the status and the API message, never the token', async () => {
    api.routes.set('/api/w/main/resources/get_value_interpolated/u/alice/db', apiError(403, 'forbidden', 'u/alice/db is not readable by bob'));
    const [forbidden, missing] = await py({ fn: 'get_resource', args: ['u/alice/db'] }, { fn: 'get_resource', args: ['u/alice/gone'] });
    expect(forbidden).toEqual({ error: 'ApiError', status: 403, message: expect.stringContaining('403: u/alice/db is not readable by bob') });
    expect(missing).toEqual({ error: 'ApiError', status: 404, message: expect.stringContaining('404: nothing at /api/w/main/resources/') });
    expect(JSON.stringify([forbidden, missing])).not.toContain(TOKEN);
  });
});

describe('svc (Python) get_variable', () => {
  it('returns the value field, and reads the environment on every call', async () => {
    api.routes.set('/api/w/main/variables/get/u/a/v', { status: 200, body: { path: 'u/a/v', value: 'one', is_secret: true } });
    api.routes.set('/api/w/other/variables/get/u/a/v', { status: 200, body: { value: 'two' } });
    const second = { ...jobEnv(), OV_TOKEN: 'second-token', OV_WORKSPACE: 'other' };
    expect(await py({ fn: 'get_variable', args: ['$var:u/a/v'] }, { fn: 'get_variable', args: ['u/a/v'], env: second })).toEqual([
      { ok: 'one' },
      { ok: 'two' },
    ]);
    expect(api.requests.map((r) => [r.method, r.url, r.authorization])).toEqual([
      ['GET', '/api/w/main/variables/get/u/a/v', `Bearer ${TOKEN}`],
      ['GET', '/api/w/other/variables/get/u/a/v', 'Bearer second-token'],
    ]);
  });

  it('says what is missing outside a job, and what could not be reached', async () => {
    const [noToken, unreachable] = await py(
      { fn: 'get_variable', args: ['u/a/v'], env: { OV_WORKSPACE: 'main', BASE_INTERNAL_URL: api.baseUrl } },
      { fn: 'get_variable', args: ['u/a/v'], env: { ...jobEnv(), BASE_INTERNAL_URL: 'http://127.0.0.1:1' } },
    );
    expect(noToken).toMatchObject({ error: 'RuntimeError', message: expect.stringContaining('OV_TOKEN is not set') });
    expect(unreachable).toMatchObject({ error: 'ConnectionError', message: expect.stringContaining('could not reach http://127.0.0.1:1') });
    expect(api.requests).toEqual([]);
  });
});

describe('svc (Python) get_context', () => {
  it('reads the job env with snake_case keys, absent ones as None', async () => {
    const env = { ...jobEnv(), OV_JOB_ID: 'job-1', OV_JOB_PATH: 'u/alice/script', OV_USERNAME: 'alice', OV_ROOT_FLOW_JOB_ID: 'root-1' };
    expect(await py({ fn: 'get_context', env })).toEqual([
      {
        ok: {
          workspace: 'main', job_id: 'job-1', job_path: 'u/alice/script', username: 'alice', flow_job_id: null, flow_path: null,
          root_flow_job_id: 'root-1', base_url: api.baseUrl,
        },
      },
    ]);
  });
});
