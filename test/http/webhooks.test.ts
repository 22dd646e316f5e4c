import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request as httpRequest } from 'node:http';
import { HTTP, CloudEvent, emitterFor, httpTransport } from 'cloudevents';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';

let s: TestServer;
const ws = () => `/api/w/${s.workspace}`;

beforeAll(async () => {
  s = await startServer({ env: { INCLUDE_HEADERS: 'X-Instance-Tag' } });
  // Returns every argument it received, so each payload rule can be checked from the outside.
  const props = ['body', 'raw_string', 'a', 'b', 'x_signature', 'x_instance_tag', 'q', 'file', 'WEBHOOK__METADATA__'];
  await createScript(s, 'f/hooks/all', 'bun', `export function main(${props.join(', ')}) { return { ${props.join(', ')} }; }`);
});
afterAll(() => s?.stop());

async function sync(query: string, init: RequestInit = {}) {
  const res = await s.fetch(`${ws()}/jobs/run_wait_result/p/f/hooks/all${query}`, { method: 'POST', ...init });
  expect(res.status).toBe(200);
  return res.json();
}

describe('payload rules (spec 4.2, 4.3)', () => {
  it('passes JSON object keys as arguments', async () => {
    expect(await sync('', { headers: { 'content-type': 'application/json' }, body: '{"a":1,"b":"two"}' })).toMatchObject({ a: 1, b: 'two' });
  });

  it('parses JSON whatever the content type says, and wraps non-objects under body', async () => {
    expect(await sync('', { headers: { 'content-type': 'text/plain' }, body: '{"a":5}' })).toMatchObject({ a: 5 });
    expect(await sync('', { headers: { 'content-type': 'application/json' }, body: '[1,2]' })).toMatchObject({ body: [1, 2] });
    expect(await sync('', { body: '"just text"' })).toMatchObject({ body: 'just text' });
  });

  it('gives an unparseable body as raw_string, even when labelled JSON', async () => {
    expect(await sync('', { headers: { 'content-type': 'application/json' }, body: 'not {json' })).toMatchObject({ raw_string: 'not {json' });
    expect(await sync('', { headers: { 'content-type': 'application/xml' }, body: '<a>1</a>' })).toMatchObject({ raw_string: '<a>1</a>' });
  });

  it('wrap_body=true wraps even objects; raw=true adds the unparsed body', async () => {
    expect(await sync('?wrap_body=true', { body: '{"a":1}' })).toMatchObject({ body: { a: 1 } });
    const raw = await sync('?raw=true', { headers: { 'content-type': 'application/json' }, body: '{"a": 1 }' });
    expect(raw).toMatchObject({ a: 1, raw_string: '{"a": 1 }' });
  });

  it('takes URL-encoded forms', async () => {
    expect(await sync('', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1&b=x%20y' })).toMatchObject({ a: '1', b: 'x y' });
  });

  it('passes listed headers and query args, and INCLUDE_HEADERS on every request', async () => {
    const got = await sync('?include_header=X-Signature&include_query=q&q=42&token_not_listed=1', {
      headers: { 'x-signature': 'sha256=abc', 'x-instance-tag': 'blue', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(got).toMatchObject({ x_signature: 'sha256=abc', x_instance_tag: 'blue', q: '42' });
  });

  it('runs GET sync with a URL-safe base64 JSON payload', async () => {
    const payload = Buffer.from(JSON.stringify({ a: 'é?/+', b: [1] })).toString('base64url');
    const res = await s.fetch(`${ws()}/jobs/run_wait_result/p/f/hooks/all?payload=${payload}`);
    expect(await res.json()).toMatchObject({ a: 'é?/+', b: [1] });
    const bad = await s.fetch(`${ws()}/jobs/run_wait_result/p/f/hooks/all?payload=%%%`);
    expect(bad.status).toBe(400);
  });

  it('refuses multipart uploads until object storage is on, then stores the files', async () => {
    const form = () => {
      const f = new FormData();
      f.set('a', 'field');
      f.set('file', new Blob(['hello file'], { type: 'text/plain' }), 'greeting.txt');
      return f;
    };
    const before = (await (await s.fetch(`${ws()}/jobs/list`)).json()).length;
    const refused = await s.fetch(`${ws()}/jobs/run_wait_result/p/f/hooks/all`, { method: 'POST', body: form() });
    expect(refused.status).toBe(400);
    expect((await refused.json()).error.code).toBe('object_storage_not_configured');
    expect((await (await s.fetch(`${ws()}/jobs/list`)).json()).length).toBe(before);

    expect((await s.post(`${ws()}/workspaces/edit_object_storage`, { enabled: true })).status).toBe(200);
    const got = await sync('', { body: form() });
    expect(got.a).toBe('field');
    expect(got.file).toHaveLength(1);
    expect(got.file[0]).toMatchObject({ filename: 'greeting.txt', size: 10 });
    expect(got.file[0].s3).toMatch(/^webhook_uploads\/.+\/greeting\.txt$/);
  });

  it('passes Cloud Events envelopes as WEBHOOK__METADATA__, structured and binary', async () => {
    const event = new CloudEvent({ type: 'com.example.order', source: '/shop', data: { a: 7 } });
    for (const message of [HTTP.structured(event), HTTP.binary(event)]) {
      const got = await sync('', { headers: message.headers as Record<string, string>, body: typeof message.body === 'string' ? message.body : JSON.stringify(message.body) });
      expect(got.a).toBe(7);
      expect(got.WEBHOOK__METADATA__).toMatchObject({ specversion: '1.0', type: 'com.example.order', source: '/shop', id: event.id });
    }
    // The SDK's own emitter, as a producer would send it.
    const url = `${s.url}${ws()}/jobs/run/p/f/hooks/all?token=${s.token}`;
    const emit = emitterFor(httpTransport(url));
    const res = (await emit(new CloudEvent({ type: 't', source: '/s', data: { b: 'emitted' } }))) as { body: string };
    expect(res.body).toMatch(/^[0-9a-f-]{36}$/);
    const job = await waitForJob(s, res.body);
    expect(job.result.b).toBe('emitted');
  });

  it('rejects Cloud Events batch mode and malformed envelopes', async () => {
    const batch = await s.fetch(`${ws()}/jobs/run/p/f/hooks/all`, { method: 'POST', headers: { 'content-type': 'application/cloudevents-batch+json' }, body: '[]' });
    expect(batch.status).toBe(400);
    expect((await batch.json()).error.code).toBe('cloudevents_batch_unsupported');
    const bad = await s.fetch(`${ws()}/jobs/run/p/f/hooks/all`, { method: 'POST', headers: { 'content-type': 'application/cloudevents+json' }, body: '{"specversion":"0.3"}' });
    expect(bad.status).toBe(400);
  });

  it('refuses oversized bodies with 413 and queues nothing', async () => {
    const before = (await (await s.fetch(`${ws()}/jobs/list?per_page=1000`)).json()).length;
    const res = await s.fetch(`${ws()}/jobs/run/p/f/hooks/all`, { method: 'POST', body: 'x'.repeat(11 * 1024 * 1024) });
    expect(res.status).toBe(413);
    expect((await res.json()).error.code).toBe('payload_too_large');
    expect((await (await s.fetch(`${ws()}/jobs/list?per_page=1000`)).json()).length).toBe(before);
  });

  it('counts a chunked body, which declares no length, and refuses it with 413 past the limit', async () => {
    const before = (await (await s.fetch(`${ws()}/jobs/list?per_page=1000`)).json()).length;
    // On a connection of its own: the server answers before reading the rest, and drops it after.
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(new URL(`${ws()}/jobs/run/p/f/hooks/all`, s.url), { method: 'POST', agent: false, headers: { authorization: `Bearer ${s.token}` } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      // Written in pieces with no length given: Node sends it chunked.
      for (let i = 0; i < 11; i++) req.write('x'.repeat(1024 * 1024));
      req.end();
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).error.code).toBe('payload_too_large');
    expect((await (await s.fetch(`${ws()}/jobs/list?per_page=1000`)).json()).length).toBe(before);
  });
});

describe('sync responses (spec 4.4, 7.1, 7.2)', () => {
  it('uses svc_status_code, svc_content_type and svc_headers', async () => {
    await createScript(s, 'f/hooks/shaped', 'bun', `export function main() {
      return { svc_status_code: 201, svc_content_type: 'text/csv', svc_headers: { 'X-Batch': '7' }, result: 'a,b\\n1,2' };
    }`);
    const res = await s.fetch(`${ws()}/jobs/run_wait_result/p/f/hooks/shaped`, { method: 'POST' });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('text/csv');
    expect(res.headers.get('x-batch')).toBe('7');
    expect(await res.text()).toBe('a,b\n1,2');
  });

  it('answers an error for an invalid svc_status_code', async () => {
    await createScript(s, 'f/hooks/badcode', 'python3', 'def main():\n    return {"svc_status_code": 999, "result": 1}\n');
    const res = await s.fetch(`${ws()}/jobs/run_wait_result/p/f/hooks/badcode`, { method: 'POST' });
    expect(res.status).toBe(500);
    expect((await res.json()).error.message).toMatch(/RFC 9110/);
  });

  it('answers a failing script with 200 and the error object', async () => {
    await createScript(s, 'f/hooks/fails', 'python3', 'def main():\n    raise ValueError("no such order")\n');
    const res = await s.fetch(`${ws()}/jobs/run_wait_result/p/f/hooks/fails`, { method: 'POST' });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.error).toMatchObject({ name: 'ValueError', message: expect.stringContaining('no such order') });
  });

  it('deletes logs, args and result after a sync response when the script asks', async () => {
    await createScript(s, 'f/hooks/secretive', 'bun', 'export function main(card: string) { console.log("card", card); return "ok " + card.slice(-4); }', { delete_after_use: true });
    const res = await s.fetch(`${ws()}/jobs/run_wait_result/p/f/hooks/secretive`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"card":"4111111111111111"}' });
    expect(await res.json()).toBe('ok 1111');
    const [job] = await (await s.fetch(`${ws()}/jobs/list?script_path_exact=f/hooks/secretive`)).json();
    expect(job).toMatchObject({ status: 'success', deleted: true, args: null, result: null, logs: '' });
    // The whole card number: a job uuid may well contain "4111" by chance.
    expect(JSON.stringify(job)).not.toContain('4111111111111111');
  });

});

describe('async jobs', () => {
  it('returns a uuid, then status, result, logs and list', async () => {
    await createScript(s, 'f/hooks/logs', 'python3', 'def main(n: int = 2):\n    print("working on", n)\n    return n * 2\n');
    const res = await s.fetch(`${ws()}/jobs/run/p/f/hooks/logs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"n":21}' });
    expect(res.status).toBe(201);
    const id = await res.text();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const job = await waitForJob(s, id);
    expect(job).toMatchObject({ id, status: 'success', success: true, result: 42, args: { n: 21 }, script_path: 'f/hooks/logs' });
    expect(job.logs).toContain('working on 21');
    expect(await (await s.fetch(`${ws()}/jobs_u/completed/get_result/${id}`)).json()).toBe(42);
    const list = await (await s.fetch(`${ws()}/jobs/list?script_path_exact=f/hooks/logs`)).json();
    expect(list.map((j: any) => j.id)).toContain(id);
    expect((await s.fetch(`${ws()}/jobs_u/get/00000000-0000-0000-0000-000000000000`)).status).toBe(404);
  });

  it('cancels a running job and kills its process', async () => {
    await createScript(s, 'f/hooks/forever', 'bash', 'sleep 60');
    const id = await (await s.fetch(`${ws()}/jobs/run/p/f/hooks/forever`, { method: 'POST' })).text();
    for (let i = 0; i < 100; i++) {
      if ((await (await s.fetch(`${ws()}/jobs_u/get/${id}`)).json()).status === 'running') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const cancel = await s.post(`${ws()}/jobs_u/queue/cancel/${id}`, { reason: 'changed my mind' });
    expect(cancel.status).toBe(200);
    const job = await waitForJob(s, id);
    expect(job.status).toBe('canceled');
    expect(job.result.error.message).toContain('changed my mind');
    expect((await s.post(`${ws()}/jobs_u/queue/cancel/${id}`, {})).status).toBe(409);
    const pending = await s.fetch(`${ws()}/jobs_u/completed/get_result/${id}`);
    expect(pending.status).toBe(200);
  });
});
