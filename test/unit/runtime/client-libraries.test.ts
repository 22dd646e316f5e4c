import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeApi, type FakeApi } from '../clients/fake-api.js';
import { isRoot, makeRunner, request, resultOf, runOnce, schemaOf } from './runtime-helpers.js';

/**
 * BASE_INTERNAL_URL as a job sees it: inside its network namespace (root), the namespace's API
 * port, which leads to the API the service knows (README "Job confinement").
 */
const jobBaseUrl = () => (isRoot ? 'http://127.0.0.1:80' : api.baseUrl);

// Scripts import the svc client libraries with nothing installed, through the real runners: a
// sandboxed Node child limited to reading its own dir, a Python child with an empty environment,
// both as nobody when the tests run as root.

const { runner, dispose } = makeRunner();
let api: FakeApi;

beforeAll(async () => {
  api = await startFakeApi();
  api.routes.set('/api/w/ws/variables/get/u/alice/greeting', { status: 200, body: { value: 'hello' } });
  api.routes.set('/api/w/ws/variables/get/u/alice/other', { status: 200, body: { value: 'again' } });
});
afterAll(async () => {
  await dispose();
  await api.close();
});

const jobEnv = (jobId: string) => ({
  OV_TOKEN: `token-${jobId}`,
  OV_WORKSPACE: 'ws',
  BASE_INTERNAL_URL: api.baseUrl,
  OV_JOB_ID: jobId,
  OV_JOB_PATH: 'u/alice/client_user',
  OV_USERNAME: 'alice',
});

describe('TypeScript scripts import svc-client', () => {
  const content = `import * as svc from 'svc-client';
import { getVariable, type JobContext } from 'svc-client';

export async function main(path: string) {
  const context: JobContext = svc.getContext();
  return { context, value: await getVariable(path) };
}`;

  it('read the job context and a variable, and each job of a warm process sees its own env', async () => {
    const run = (jobId: string, path: string) =>
      runOnce(runner, request('nativets', content, { jobId, schema: schemaOf('path'), args: { path }, env: jobEnv(jobId) }));
    const first = resultOf((await run('job-ts-1', 'u/alice/greeting')).outcome);
    expect(first).toEqual({
      context: {
        workspace: 'ws', jobId: 'job-ts-1', jobPath: 'u/alice/client_user', username: 'alice', flowJobId: null, flowPath: null,
        rootFlowJobId: null, baseUrl: jobBaseUrl(),
      },
      value: 'hello',
    });
    const second = resultOf((await run('job-ts-2', 'u/alice/other')).outcome);
    expect(second).toMatchObject({ context: { jobId: 'job-ts-2' }, value: 'again' });
    expect(api.requests.filter((r) => r.authorization?.startsWith('Bearer token-job-ts'))).toEqual([
      { method: 'GET', url: '/api/w/ws/variables/get/u/alice/greeting', authorization: 'Bearer token-job-ts-1' },
      { method: 'GET', url: '/api/w/ws/variables/get/u/alice/other', authorization: 'Bearer token-job-ts-2' },
    ]);
  });

  it('fail the job with the API message when the API refuses', async () => {
    const { outcome } = await runOnce(
      runner,
      request('nativets', content, { schema: schemaOf('path'), args: { path: 'u/alice/missing' }, env: jobEnv('job-ts-3') }),
    );
    expect(outcome).toMatchObject({ ok: false, error: { name: 'ApiError', message: expect.stringContaining('404: nothing at') } });
  });
});

describe('Python scripts import svc', () => {
  const content = `import svc
from svc import get_variable

def main(path: str):
    return {"context": svc.get_context(), "value": get_variable(path)}
`;

  it('read the job context and a variable, and each job of a warm process sees its own env', async () => {
    const run = (jobId: string, path: string) =>
      runOnce(runner, request('python3', content, { jobId, schema: schemaOf('path'), args: { path }, env: jobEnv(jobId) }));
    expect(resultOf((await run('job-py-1', 'u/alice/greeting')).outcome)).toEqual({
      context: {
        workspace: 'ws', job_id: 'job-py-1', job_path: 'u/alice/client_user', username: 'alice', flow_job_id: null, flow_path: null,
        root_flow_job_id: null, base_url: jobBaseUrl(),
      },
      value: 'hello',
    });
    expect(resultOf((await run('job-py-2', 'u/alice/other')).outcome)).toMatchObject({ context: { job_id: 'job-py-2' }, value: 'again' });
    expect(api.requests.filter((r) => r.authorization?.startsWith('Bearer token-job-py'))).toEqual([
      { method: 'GET', url: '/api/w/ws/variables/get/u/alice/greeting', authorization: 'Bearer token-job-py-1' },
      { method: 'GET', url: '/api/w/ws/variables/get/u/alice/other', authorization: 'Bearer token-job-py-2' },
    ]);
  });

  it('fail the job with ApiError and the API message when the API refuses', async () => {
    const { outcome } = await runOnce(
      runner,
      request('python3', content, { schema: schemaOf('path'), args: { path: 'u/alice/missing' }, env: jobEnv('job-py-3') }),
    );
    expect(outcome).toMatchObject({ ok: false, error: { name: 'ApiError', message: expect.stringContaining('404: nothing at') } });
  });
});
