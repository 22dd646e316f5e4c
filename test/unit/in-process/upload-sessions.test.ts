import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_UPLOAD_SETTINGS, uploadSettingsFromEnv } from '../../../functions/core/uploads/upload-sessions.js';
import { createScript, inProcessService, type InProcessService } from './harness.js';

/**
 * The upload rules of core/uploads/upload-sessions.ts that need a clock the test moves: part URLs and the
 * upload expire together. test/http/large-uploads.test.ts covers the flow in both shells.
 */
let s: InProcessService;
const ws = '/api/w/main';

beforeAll(async () => {
  s = await inProcessService();
  await s.post(`${ws}/workspaces/edit_object_storage`, { enabled: true });
  await createScript(s, 'f/up/echo', 'export function main(files) { return files; }');
});

/** The path of a part URL (the memory shell's base URL is not served). */
const local = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};

async function created(size = 3) {
  const res = await s.post(`${ws}/job_helpers/uploads/create`, { path: 'f/up/echo', size });
  expect(res.status).toBe(201);
  return res.json() as Promise<{ upload: string; key: string; parts: Array<{ part_number: number; url: string }> }>;
}

describe('upload sessions', () => {
  it('expire: a part PUT or a completion after the upload expired is refused, an abort is not', async () => {
    const up = await created();
    const put = await s.fetch(local(up.parts[0].url), { method: 'PUT', body: 'abc', token: null });
    expect(put.status).toBe(200);
    const etag = put.headers.get('etag')!;
    s.clock.advance(DEFAULT_UPLOAD_SETTINGS.urlSeconds * 1000 + 1);
    const late = await s.fetch(local(up.parts[0].url), { method: 'PUT', body: 'abc', token: null });
    expect(late.status).toBe(403);
    expect((await late.json()).error.code).toBe('upload_expired');
    const complete = await s.post(`${ws}/job_helpers/uploads/complete`, { upload: up.upload, parts: [{ part_number: 1, etag }] });
    expect(complete.status).toBe(403);
    expect((await s.post(`${ws}/job_helpers/uploads/abort`, { upload: up.upload })).status).toBe(200);
  });

  it('refuses a part whose bytes differ from the declared size at completion, and leaves no object', async () => {
    const up = await created(3);
    const put = await s.fetch(local(up.parts[0].url), { method: 'PUT', body: 'ab', token: null });
    const complete = await s.post(`${ws}/job_helpers/uploads/complete`, { upload: up.upload, parts: [{ part_number: 1, etag: put.headers.get('etag') }] });
    expect(complete.status).toBe(400);
    expect((await complete.json()).error.code).toBe('invalid_upload_parts');
    const run = await s.fetch(`${ws}/jobs/run_wait_result/p/f/up/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ files: [{ s3: up.key }] }) });
    expect(run.status).toBe(400);
  });

  it('needs the workspace object storage', async () => {
    await s.post(`${ws}/workspaces/edit_object_storage`, { enabled: false });
    const res = await s.post(`${ws}/job_helpers/uploads/create`, { path: 'f/up/echo', size: 3 });
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe('object_storage_not_configured');
    await s.post(`${ws}/workspaces/edit_object_storage`, { enabled: true });
  });
});

describe('the upload limit', () => {
  it('takes a file of exactly SVC_MAX_UPLOAD_BYTES, in a multipart webhook or an upload, and refuses one byte more', async () => {
    const small = await inProcessService({ config: { uploads: { ...DEFAULT_UPLOAD_SETTINGS, maxBytes: 10 } } });
    await small.post(`${ws}/workspaces/edit_object_storage`, { enabled: true });
    await createScript(small, 'f/up/echo', 'export function main(files) { return files; }');
    const post = (bytes: string) => {
      const form = new FormData();
      form.set('files', new Blob([bytes]), 'f.txt');
      return small.fetch(`${ws}/jobs/run_wait_result/p/f/up/echo`, { method: 'POST', body: form });
    };
    const exact = await post('0123456789');
    expect(exact.status).toBe(200);
    expect((await exact.json())[0].size).toBe(10);
    const over = await post('0123456789+');
    expect(over.status).toBe(413);
    expect((await small.post(`${ws}/job_helpers/uploads/create`, { path: 'f/up/echo', size: 10 })).status).toBe(201);
    expect((await small.post(`${ws}/job_helpers/uploads/create`, { path: 'f/up/echo', size: 11 })).status).toBe(413);
  });
});

describe('upload settings', () => {
  it('default to 5 GiB in 64 MiB parts and refuse what S3 could not take', () => {
    expect(uploadSettingsFromEnv({}, 'SVC_')).toEqual({ maxBytes: 5 * 1024 ** 3, partBytes: 64 * 1024 ** 2, urlSeconds: 3600 });
    expect(uploadSettingsFromEnv({ MAX_UPLOAD_BYTES: String(50 * 1024 ** 3), UPLOAD_PART_BYTES: String(128 * 1024 ** 2) }, '')).toMatchObject({ maxBytes: 50 * 1024 ** 3 });
    expect(() => uploadSettingsFromEnv({ SVC_UPLOAD_PART_BYTES: '1024' }, 'SVC_')).toThrow(/at least/);
    expect(() => uploadSettingsFromEnv({ SVC_MAX_UPLOAD_BYTES: String(1024 ** 4), SVC_UPLOAD_PART_BYTES: String(5 * 1024 ** 2) }, 'SVC_')).toThrow(/10000 parts/);
    expect(() => uploadSettingsFromEnv({ SVC_MAX_UPLOAD_BYTES: 'lots' }, 'SVC_')).toThrow(/positive integer/);
  });
});
