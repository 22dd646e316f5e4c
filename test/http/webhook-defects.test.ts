import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';
import { readSse } from './sse-client.js';

/** Issue 15, point 6: webhook behaviour that differed from the spec or from what users expect. */
let s: TestServer;
const ws = () => `/api/w/${s.workspace}`;
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

beforeAll(async () => {
  s = await startServer();
  const props = ['a', 'raw_string', 'authorization', 'cookie', 'x_tag', 'WEBHOOK__METADATA__'];
  await createScript(s, 'f/defects/all', 'bun', `export function main(${props.join(', ')}) { return { ${props.join(', ')} }; }`);
});
afterAll(() => s?.stop());

async function sync(query: string, init: RequestInit = {}) {
  const res = await s.fetch(`${ws()}/jobs/run_wait_result/p/f/defects/all${query}`, { method: 'POST', ...init });
  return { status: res.status, body: await res.json() };
}

describe('webhook defects', () => {
  it("never passes the caller's credentials to the job: include_header=Authorization is refused", async () => {
    const res = await sync('?include_header=Authorization', { body: '{"a":1}' });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/Authorization/);
    expect((await sync('?include_header=X-Tag,Cookie', { body: '{}' })).status).toBe(400);
    const jobs = await (await s.fetch(`${ws()}/jobs/list?script_path_exact=f/defects/all`)).json();
    expect(JSON.stringify(jobs)).not.toContain(s.token);
    expect((await sync('?include_header=X-Tag', { body: '{}', headers: { 'x-tag': 'blue' } })).body).toMatchObject({ x_tag: 'blue' });
  });

  it('gives raw=true on the GET payload form the payload JSON as raw_string', async () => {
    const res = await s.fetch(`${ws()}/jobs/run_wait_result/p/f/defects/all?raw=true&payload=${b64({ a: 5 })}`);
    expect(await res.json()).toMatchObject({ a: 5, raw_string: '{"a":5}' });
  });

  it('keeps binary-mode Cloud Event metadata with form and multipart bodies', async () => {
    const ce = { 'ce-specversion': '1.0', 'ce-id': 'e-1', 'ce-source': '/tests', 'ce-type': 'order.created' };
    const form = await sync('', { headers: { ...ce, 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=7' });
    expect(form.body).toMatchObject({ a: '7', WEBHOOK__METADATA__: { id: 'e-1', source: '/tests', type: 'order.created' } });
    const multipart = new FormData();
    multipart.set('a', '8');
    const mp = await sync('', { headers: ce, body: multipart });
    expect(mp.body).toMatchObject({ a: '8', WEBHOOK__METADATA__: { id: 'e-1', type: 'order.created' } });
  });

  it('answers 404 for the result of a job deleted after use, not 200 null', async () => {
    await createScript(s, 'f/defects/secret', 'bun', 'export function main() { return "s3cret"; }', { delete_after_use: true });
    await s.fetch(`${ws()}/jobs/run_wait_result/p/f/defects/secret`, { method: 'POST' });
    const [job] = await (await s.fetch(`${ws()}/jobs/list?script_path_exact=f/defects/secret`)).json();
    const res = await s.fetch(`${ws()}/jobs_u/completed/get_result/${job.id}`);
    expect(res.status).toBe(404);
    expect((await res.json()).error.code).toBe('result_deleted');
  });

  it('names both scripts and flows when nothing is at a path, and flows on the /f/ alias', async () => {
    const byPath = await s.fetch(`${ws()}/jobs/run/p/f/defects/nothing`, { method: 'POST' });
    expect(byPath.status).toBe(404);
    expect((await byPath.json()).error.message).toBe('script or flow f/defects/nothing not found');
    const byFlow = await s.fetch(`${ws()}/jobs/run/f/f/defects/all`, { method: 'POST' });
    expect(byFlow.status).toBe(404);
    expect((await byFlow.json()).error.message).toBe('flow f/defects/all not found');
  });

  it('resumes an SSE stream from stream_offset', async () => {
    await createScript(s, 'f/defects/gen', 'bun', `export async function* main() { yield 'abc'; yield 'def'; }`);
    const id = await (await s.fetch(`${ws()}/jobs/run/p/f/defects/gen`, { method: 'POST' })).text();
    await waitForJob(s, id);
    const events = await readSse(await s.fetch(`${ws()}/jobs_u/getupdate_sse/${id}?stream_offset=4`));
    const last = events.at(-1);
    expect(last).toMatchObject({ completed: true, new_result_stream: 'ef', stream_offset: 6 });
    expect((await s.fetch(`${ws()}/jobs_u/getupdate_sse/${id}?stream_offset=-1`)).status).toBe(400);
  });

  it("keeps a generator's return value, the stream beside it", async () => {
    await createScript(s, 'f/defects/gen_ret', 'bun', `export async function* main() { yield 'x'; yield 'y'; return { total: 2 }; }`);
    await createScript(s, 'f/defects/gen_py', 'python3', 'def main():\n    yield "p"\n    yield "q"\n    return 7\n');
    const ts = await waitForJob(s, await (await s.fetch(`${ws()}/jobs/run/p/f/defects/gen_ret`, { method: 'POST' })).text());
    expect(ts.result).toEqual({ total: 2, wm_stream: 'xy' });
    const py = await waitForJob(s, await (await s.fetch(`${ws()}/jobs/run/p/f/defects/gen_py`, { method: 'POST' })).text());
    expect(py.result).toEqual({ result: 7, wm_stream: 'pq' });
  });

  it("streams with Windmill's `WM_STREAM: ` output lines (windmill-client's streamResult) as a generator does", async () => {
    const TS = `import * as wmill from 'windmill-client';
export async function main() {
  console.log('before');
  wmill.appendToResultStream('hello ');
  await wmill.streamResult((async function* () { yield 'big\\n'; yield 'world'; })());
  console.log('after');
}`;
    await createScript(s, 'f/defects/wm_stream_ts', 'bun', TS);
    await createScript(s, 'f/defects/wm_stream_py', 'python3', 'def main():\n    print("WM_STREAM: p\\\\nq", flush=True)\n    print("a log line")\n    return {"n": 1}\n');
    const ts = await s.fetch(`${ws()}/jobs/run_wait_result/p/f/defects/wm_stream_ts`, { method: 'POST' });
    expect(await ts.json()).toBe('hello big\nworld');
    const [tsJob] = await (await s.fetch(`${ws()}/jobs/list?script_path_exact=f/defects/wm_stream_ts`)).json();
    const shown = await (await s.fetch(`${ws()}/jobs_u/get/${tsJob.id}`)).json();
    expect(shown.logs).toContain('before');
    expect(shown.logs).toContain('after');
    expect(shown.logs).not.toContain('WM_STREAM');
    const events = await readSse(await s.fetch(`${ws()}/jobs_u/getupdate_sse/${tsJob.id}`));
    expect(events.map((e) => e.new_result_stream ?? '').join('')).toBe('hello big\nworld');
    const py = await waitForJob(s, await (await s.fetch(`${ws()}/jobs/run/p/f/defects/wm_stream_py`, { method: 'POST' })).text());
    expect(py.result).toEqual({ n: 1, wm_stream: 'p\nq' });
    expect(py.logs).toContain('a log line');
    expect(py.logs).not.toContain('WM_STREAM');
  });

  it("runs the README's Python example: a parameter typed with a resource type", async () => {
    await createScript(s, 'f/defects/py_db', 'python3', 'def main(db: postgresql, n: int = 1):\n    return {"host": db["host"], "n": n}\n');
    const res = await s.fetch(`${ws()}/jobs/run_wait_result/p/f/defects/py_db`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"db":{"host":"pg.local"}}' });
    expect(await res.json()).toEqual({ host: 'pg.local', n: 1 });
  });

  it('lets multipart files be downloaded through an authorised route and both client libraries', async () => {
    expect((await s.post(`${ws()}/workspaces/edit_object_storage`, { enabled: true })).status).toBeLessThan(300);
    await createScript(s, 'f/defects/upload', 'bun', 'export function main(doc) { return doc; }');
    await createScript(s, 'f/defects/read_ts', 'bun', `import * as svc from 'svc-client';
export async function main(doc) { return new TextDecoder().decode(await svc.downloadFile(doc[0])); }`);
    await createScript(s, 'f/defects/read_py', 'python3', 'import svc\ndef main(doc: list):\n    return svc.download_file(doc[0]["s3"]).decode()\n');
    const form = () => {
      const f = new FormData();
      f.set('doc', new Blob(['file body ü'], { type: 'text/plain' }), 'notes.txt');
      return f;
    };
    const [stored] = await (await s.fetch(`${ws()}/jobs/run_wait_result/p/f/defects/upload`, { method: 'POST', body: form() })).json();
    expect(stored.s3).toMatch(/^webhook_uploads\/f\/defects\/upload\/.+\/notes\.txt$/);

    const res = await s.fetch(`${ws()}/job_helpers/download_s3_file?file_key=${encodeURIComponent(stored.s3)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment/);
    expect(await res.text()).toBe('file body ü');
    expect((await s.fetch(`${ws()}/job_helpers/download_s3_file?file_key=${encodeURIComponent(stored.s3)}`, { token: null })).status).toBe(401);
    expect((await s.fetch(`${ws()}/job_helpers/download_s3_file?file_key=../../signing.key`)).status).toBe(400);

    for (const reader of ['f/defects/read_ts', 'f/defects/read_py']) {
      const got = await s.fetch(`${ws()}/jobs/run_wait_result/p/${reader}`, { method: 'POST', body: form() });
      expect(await got.json(), reader).toBe('file body ü');
    }
  });
});
