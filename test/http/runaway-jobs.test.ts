import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';

/**
 * Runaway jobs (docs/security.md, "Runaway jobs"), over real HTTP in both shells: a script that
 * runs itself through the API with its job token stops at the depth limit, the refusal in the
 * deepest run's logs and result; and a workspace with its limit of queued jobs is refused new runs
 * with 429, a job's run through its token as much as a webhook's. Small limits keep it fast.
 */

const DEPTH = 3;
const QUEUED = 3;
let s: TestServer;
beforeAll(async () => {
  s = await startServer({ env: { SVC_MAX_RUN_DEPTH: String(DEPTH), SVC_MAX_QUEUED_JOBS_PER_WORKSPACE: String(QUEUED) } });
});
afterAll(() => s?.stop());

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's JSON view, read as a client reads it
type Json = Record<string, any>;
const ws = () => `/api/w/${s.workspace}`;
const job = async (id: string): Promise<Json> => (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json();

async function start(path: string, kind: 'p' | 'f' = 'p'): Promise<string> {
  const res = await s.post(`${ws()}/jobs/run/${kind}/${path}`, {});
  expect(res.status, await res.clone().text()).toBe(201);
  return res.text();
}

/** Polls `read` until `ok` or the deadline. */
async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`still not there: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts `path` through the API with the job's own token; logs and throws the answer when refused. */
const START_WITH_TOKEN = `async function startWithToken(path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(process.env.BASE_INTERNAL_URL + '/api/w/' + process.env.WM_WORKSPACE + '/jobs/run/p/' + path, {
    method: 'POST', headers: { authorization: 'Bearer ' + process.env.WM_TOKEN, 'content-type': 'application/json' }, body: '{}',
  });
  return { status: res.status, body: await res.text() };
}`;

describe('a script that runs itself with its job token', () => {
  it('stops at the depth limit: each run names the job that started it, and the deepest fails with the refusal in its logs', async () => {
    await createScript(
      s,
      'u/admin/again',
      'bun',
      `${START_WITH_TOKEN}
export async function main() {
  const answer = await startWithToken('u/admin/again');
  if (answer.status !== 201) {
    console.log('refused: ' + answer.status + ' ' + answer.body);
    throw new Error('refused: ' + answer.status + ' ' + answer.body);
  }
  return answer.body;
}`,
    );
    const chain = [await waitForJob(s, await start('u/admin/again'), 60_000)];
    // Each run's result is the id of the run it started.
    while (chain.at(-1)!.status === 'success') chain.push(await waitForJob(s, chain.at(-1)!.result, 60_000));
    expect(chain.map((j) => j.status)).toEqual(['success', 'success', 'success', 'failed']);
    expect(chain[0].started_by_job).toBeUndefined();
    for (let depth = 1; depth <= DEPTH; depth++) expect(chain[depth]).toMatchObject({ started_by_job: chain[depth - 1].id, run_depth: depth, parent_job: null });
    const deepest = chain[DEPTH];
    expect(deepest.logs).toContain('refused: 400');
    expect(deepest.logs).toContain('run_depth_limit');
    expect(deepest.result.error.message).toContain(`beyond the limit of ${DEPTH}`);
    // Nothing beyond: no run names the deepest as its starter.
    const all: Json[] = await (await s.fetch(`${ws()}/jobs/list?script_path_exact=u/admin/again&per_page=100`)).json();
    expect(all.filter((j) => j.script_path === 'u/admin/again')).toHaveLength(DEPTH + 1);
  });
});

describe("a workspace's queued jobs", () => {
  it('refuses a new run with 429 once the workspace has its limit queued, to a job with its token as to a webhook, and accepts runs again when one leaves the queue', async () => {
    // One run holds the only slot of `hold`; the others wait, queued, behind it.
    await createScript(s, 'u/admin/hold', 'bun', 'export async function main() { await new Promise((r) => setTimeout(r, 120_000)); return "held" }', { concurrent_limit: 1 });
    await createScript(s, 'u/admin/hello', 'bun', 'export function main() { return "hi" }');
    const flow = await s.post(`${ws()}/flows/create`, { path: 'u/admin/hello_flow', value: { modules: [] } });
    expect(flow.status, await flow.clone().text()).toBe(201);
    // A job fills the queue with its token until it is refused.
    await createScript(
      s,
      'u/admin/filler',
      'bun',
      `${START_WITH_TOKEN}
export async function main() {
  const started: string[] = [];
  for (let i = 0; i < ${QUEUED + 5}; i++) {
    const answer = await startWithToken('u/admin/hold');
    if (answer.status !== 201) {
      console.log('refused: ' + answer.status + ' ' + answer.body);
      return { started, refused: answer };
    }
    started.push(answer.body);
  }
  return { started, refused: null };
}`,
    );
    const holder = await start('u/admin/hold');
    await until(() => job(holder), (j) => j.status === 'running');
    const filler = await waitForJob(s, await start('u/admin/filler'), 60_000);
    const held: string[] = [holder, ...filler.result.started];
    try {
      expect(filler.status).toBe('success');
      // The limit of queued runs, then a refusal (a store's count may lag a start or two on AWS).
      expect(filler.result.started.length).toBeGreaterThanOrEqual(QUEUED);
      expect(filler.result.refused.status).toBe(429);
      expect(JSON.parse(filler.result.refused.body).error).toMatchObject({ code: 'too_many_queued_jobs' });
      expect(filler.logs).toContain('refused: 429');
      expect(filler.logs).toContain('too_many_queued_jobs');

      // A webhook's run, async or sync, of a script or a flow: refused the same way, nothing stored.
      for (const path of ['jobs/run/p/u/admin/hello', 'jobs/run_wait_result/p/u/admin/hello', 'jobs/run/f/u/admin/hello_flow']) {
        const res = await s.post(`${ws()}/${path}`, {});
        expect(res.status, path).toBe(429);
        const body = await res.json();
        expect(body.error.code).toBe('too_many_queued_jobs');
        expect(body.error.message).toContain(`jobs queued, the most it may have waiting to start`);
      }

      // Runs leave the queue (canceled): runs are accepted again.
      const cancel = await s.post(`${ws()}/jobs/queue/cancel_selection`, filler.result.started);
      expect(cancel.status, await cancel.clone().text()).toBe(200);
      const hello = await until(() => s.post(`${ws()}/jobs/run_wait_result/p/u/admin/hello`, {}), (res) => res.status !== 429);
      expect(hello.status).toBe(200);
      expect(await hello.json()).toBe('hi');
    } finally {
      await s.post(`${ws()}/jobs/queue/cancel_selection`, held);
    }
  });
});
