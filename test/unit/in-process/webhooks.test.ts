import { beforeAll, describe, expect, it } from 'vitest';
import { HTTP, CloudEvent } from 'cloudevents';
import { createScript, inProcessService, json, type InProcessService } from './harness.js';

/**
 * The payload rules (spec 4.2, 4.3), sync response shaping (4.4, 7.1, 7.2) and async job
 * lifecycle, in-process through app.request(). test/http/webhooks.test.ts keeps what needs a real
 * socket and the real runner (the CloudEvents emitter over HTTP, killing a process on cancel).
 */

let s: InProcessService;
const ws = '/api/w/main';
const MAX_BODY = 64 * 1024;

beforeAll(async () => {
  s = await inProcessService({ config: { includeHeaders: ['X-Instance-Tag'] }, maxBodyBytes: MAX_BODY });
  // Returns every argument it received, so each payload rule can be checked from the outside.
  const props = ['body', 'raw_string', 'a', 'b', 'x_signature', 'x_instance_tag', 'q', 'file', 'WEBHOOK__METADATA__'];
  await createScript(s, 'f/hooks/all', `export function main(${props.join(', ')}) { return { ${props.join(', ')} }; }`);
});

async function sync(query: string, init: RequestInit = {}) {
  const res = await s.fetch(`${ws}/jobs/run_wait_result/p/f/hooks/all${query}`, { method: 'POST', ...init });
  expect(res.status).toBe(200);
  return res.json();
}

const jobCount = async () => (await s.store.listJobs({ workspace_id: 'main', limit: 10_000 })).length;

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
    expect(await sync('?raw=true', { headers: { 'content-type': 'application/json' }, body: '{"a": 1 }' })).toMatchObject({ a: 1, raw_string: '{"a": 1 }' });
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

  it('runs GET sync with a URL-safe base64 JSON payload, and refuses a bad one', async () => {
    const payload = Buffer.from(JSON.stringify({ a: 'é?/+', b: [1] })).toString('base64url');
    expect(await (await s.fetch(`${ws}/jobs/run_wait_result/p/f/hooks/all?payload=${payload}`)).json()).toMatchObject({ a: 'é?/+', b: [1] });
    const before = await jobCount();
    expect((await s.fetch(`${ws}/jobs/run_wait_result/p/f/hooks/all?payload=%%%`)).status).toBe(400);
    expect(await jobCount()).toBe(before);
  });

  it('refuses multipart uploads until object storage is on, then stores the files', async () => {
    const form = () => {
      const f = new FormData();
      f.set('a', 'field');
      f.set('file', new Blob(['hello file'], { type: 'text/plain' }), 'greeting.txt');
      return f;
    };
    const before = await jobCount();
    const refused = await s.fetch(`${ws}/jobs/run_wait_result/p/f/hooks/all`, { method: 'POST', body: form() });
    expect(refused.status).toBe(400);
    expect((await refused.json()).error.code).toBe('object_storage_not_configured');
    expect(await jobCount()).toBe(before);

    expect((await s.post(`${ws}/workspaces/edit_object_storage`, { enabled: true })).status).toBe(200);
    const got = await sync('', { body: form() });
    expect(got.a).toBe('field');
    expect(got.file).toHaveLength(1);
    expect(got.file[0]).toMatchObject({ filename: 'greeting.txt', size: 10 });
    expect(got.file[0].s3).toMatch(/^webhook_uploads\/.+\/greeting\.txt$/);
    // Stored under the workspace, so no workspace reads another's uploads.
    expect(Buffer.from((await s.deps.blobs.get(`main/${got.file[0].s3}`))!).toString()).toBe('hello file');
  });

  it('passes Cloud Events envelopes as WEBHOOK__METADATA__, structured and binary', async () => {
    const event = new CloudEvent({ type: 'com.example.order', source: '/shop', data: { a: 7 } });
    for (const message of [HTTP.structured(event), HTTP.binary(event)]) {
      const got = await sync('', { headers: message.headers as Record<string, string>, body: typeof message.body === 'string' ? message.body : JSON.stringify(message.body) });
      expect(got.a).toBe(7);
      expect(got.WEBHOOK__METADATA__).toMatchObject({ specversion: '1.0', type: 'com.example.order', source: '/shop', id: event.id });
    }
  });

  it('rejects Cloud Events batch mode and malformed envelopes, queueing nothing', async () => {
    const before = await jobCount();
    const batch = await s.fetch(`${ws}/jobs/run/p/f/hooks/all`, { method: 'POST', headers: { 'content-type': 'application/cloudevents-batch+json' }, body: '[]' });
    expect(batch.status).toBe(400);
    expect((await batch.json()).error.code).toBe('cloudevents_batch_unsupported');
    const bad = await s.fetch(`${ws}/jobs/run/p/f/hooks/all`, { method: 'POST', headers: { 'content-type': 'application/cloudevents+json' }, body: '{"specversion":"0.3"}' });
    expect(bad.status).toBe(400);
    expect(await jobCount()).toBe(before);
  });

  it('refuses oversized bodies with 413 and queues nothing', async () => {
    const before = await jobCount();
    const res = await s.fetch(`${ws}/jobs/run/p/f/hooks/all`, { method: 'POST', body: 'x'.repeat(MAX_BODY + 1) });
    expect(res.status).toBe(413);
    expect((await res.json()).error.code).toBe('payload_too_large');
    expect(await jobCount()).toBe(before);
  });
});

describe('sync responses (spec 4.4, 7.1, 7.2)', () => {
  it('uses svc_status_code, svc_content_type and svc_headers', async () => {
    await createScript(s, 'f/hooks/shaped', `export function main() {
      return { svc_status_code: 201, svc_content_type: 'text/csv', svc_headers: { 'X-Batch': '7' }, result: 'a,b\\n1,2' };
    }`);
    const res = await s.fetch(`${ws}/jobs/run_wait_result/p/f/hooks/shaped`, { method: 'POST' });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('text/csv');
    expect(res.headers.get('x-batch')).toBe('7');
    expect(await res.text()).toBe('a,b\n1,2');
  });

  it('answers an error for an invalid svc_status_code', async () => {
    await createScript(s, 'f/hooks/badcode', 'export function main() { return { svc_status_code: 999, result: 1 } }');
    const res = await s.fetch(`${ws}/jobs/run_wait_result/p/f/hooks/badcode`, { method: 'POST' });
    expect(res.status).toBe(500);
    expect((await res.json()).error.message).toMatch(/RFC 9110/);
  });

  it('deletes logs, args and result after a sync response when the script asks', async () => {
    await createScript(s, 'f/hooks/secretive', 'export function main(card: string) { console.log("card", card); return "ok " + card.slice(-4); }', { delete_after_use: true });
    const res = await s.fetch(`${ws}/jobs/run_wait_result/p/f/hooks/secretive`, json({ card: '4111111111111111' }));
    expect(await res.json()).toBe('ok 1111');
    await s.settled();
    const [job] = await (await s.fetch(`${ws}/jobs/list?script_path_exact=f/hooks/secretive`)).json();
    expect(job).toMatchObject({ status: 'success', deleted: true, args: null, result: null, logs: '' });
    expect(JSON.stringify(job)).not.toContain('4111111111111111');
  });
});

describe('async jobs', () => {
  it('cancels a running job with a reason; a second cancel is a conflict', async () => {
    await createScript(s, 'f/hooks/forever', 'export async function main() { await new Promise(() => {}) }');
    const id = await (await s.fetch(`${ws}/jobs/run/p/f/hooks/forever`, { method: 'POST' })).text();
    expect((await (await s.fetch(`${ws}/jobs_u/get/${id}`)).json()).status).toBe('running');
    const cancel = await s.post(`${ws}/jobs_u/queue/cancel/${id}`, { reason: 'changed my mind' });
    expect(cancel.status).toBe(200);
    const job = await s.job(id);
    expect(job.status).toBe('canceled');
    expect(job.result.error.message).toContain('changed my mind');
    expect((await s.post(`${ws}/jobs_u/queue/cancel/${id}`, {})).status).toBe(409);
    expect((await s.fetch(`${ws}/jobs_u/completed/get_result/${id}`)).status).toBe(200);
  });

  it('runs a queued job at most once, however often it is delivered', async () => {
    await createScript(s, 'f/hooks/once', 'export function main() { console.log("ran"); return 1 }');
    const id = await (await s.fetch(`${ws}/jobs/run/p/f/hooks/once`, { method: 'POST' })).text();
    await s.settled();
    const runs = s.runner.requests.filter((r) => r.jobId === id).length;
    expect(runs).toBe(1);
    // At-least-once delivery: the queue hands the same job over again.
    await s.deps.queue.enqueue((await s.store.getJob('main', id))!);
    await s.settled();
    expect(s.runner.requests.filter((r) => r.jobId === id)).toHaveLength(runs);
    expect(await s.job(id)).toMatchObject({ status: 'success', attempts: 1, logs: 'ran\n' });
  });
});
