import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScript, startServer, waitForJob, type TestServer } from './harness.js';

/**
 * Issue 18 point 5: files of any size (up to SVC_MAX_UPLOAD_BYTES) through upload sessions, in
 * both shells. The client PUTs parts to the URLs the create call answers (local: this service's
 * signed part route; AWS: S3 presigned UploadPart URLs, here s3rver's), completes, and names the
 * object in a webhook call; the job downloads it. Parts of 5 MiB (S3's smallest) keep the files small.
 */
const SHELL = process.env.SVC_TEST_SHELL === 'aws' ? 'aws' : 'local';
const PART = 5 * 1024 * 1024;
let s: TestServer;
const ws = () => `/api/w/${s.workspace}`;
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

beforeAll(async () => {
  s = await startServer({ env: { SVC_UPLOAD_PART_BYTES: String(PART) } });
  expect((await s.post(`${ws()}/workspaces/edit_object_storage`, { enabled: true })).status).toBeLessThan(300);
  // The job downloads every file it is given and answers what it read.
  await createScript(
    s,
    'f/uploads/digest',
    'bun',
    `import * as svc from 'svc-client';
export async function main(files, note) {
  const read = [];
  for (const f of files) {
    const bytes = await svc.downloadFile(f);
    const digest = Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes)), (b) => b.toString(16).padStart(2, '0')).join('');
    read.push({ s3: f.s3, size: f.size, filename: f.filename, read: bytes.byteLength, sha256: digest });
  }
  return { read, note };
}`,
  );
  await createScript(s, 'f/uploads/other', 'bun', 'export function main(files) { return files; }');
});
afterAll(() => s?.stop());

interface Created {
  upload: string;
  key: string;
  part_size: number;
  parts: Array<{ part_number: number; url: string }>;
}

async function createUpload(body: Record<string, unknown>, base = ws()): Promise<Response> {
  return s.post(`${base}/job_helpers/uploads/create`, body);
}

/** PUTs each slice to its URL as curl would (no token: the URL is the credential); answers the ETags. */
async function putParts(created: Created, bytes: Uint8Array): Promise<Array<{ part_number: number; etag: string }>> {
  const etags = [];
  for (const part of created.parts) {
    const slice = bytes.slice((part.part_number - 1) * created.part_size, part.part_number * created.part_size);
    const res = await fetch(part.url, { method: 'PUT', body: slice });
    expect(res.status, await res.clone().text()).toBe(200);
    etags.push({ part_number: part.part_number, etag: res.headers.get('etag')! });
  }
  return etags;
}

async function runDigest(payload: unknown, path = 'f/uploads/digest') {
  const res = await s.fetch(`${ws()}/jobs/run_wait_result/p/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) });
  return { status: res.status, body: await res.json() };
}

async function jobCount(): Promise<number> {
  return (await (await s.fetch(`${ws()}/jobs/list?per_page=1000`)).json()).length;
}

describe(`large uploads (${SHELL} shell)`, () => {
  const bytes = new Uint8Array(randomBytes(2 * PART + 12345));
  let created: Created;
  let etags: Array<{ part_number: number; etag: string }>;

  it('creates an upload whose parts go straight to storage, in parts of the configured size', async () => {
    const res = await createUpload({ path: 'f/uploads/digest', size: bytes.byteLength, content_type: 'application/octet-stream', filename: 'big data.bin' });
    expect(res.status).toBe(201);
    created = await res.json();
    expect(created.key).toMatch(/^webhook_uploads\/f\/uploads\/digest\/[0-9a-f-]+\/big_data\.bin$/);
    expect(created.part_size).toBe(PART);
    expect(created.parts.map((p) => p.part_number)).toEqual([1, 2, 3]);
    for (const part of created.parts) {
      if (SHELL === 'aws') expect(part.url).toMatch(/X-Amz-Signature=.*/);
      else expect(part.url.startsWith(`${s.url}${ws()}/job_helpers/uploads/part?`)).toBe(true);
    }
    etags = await putParts(created, bytes);
  });

  it('refuses to give a job an upload that is not completed', async () => {
    const before = await jobCount();
    const res = await runDigest({ files: [{ s3: created.key }] });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('upload_not_found');
    expect(await jobCount()).toBe(before);
  });

  it('refuses to complete with missing, repeated or unknown part numbers, and a forged upload', async () => {
    const complete = (body: unknown) => s.post(`${ws()}/job_helpers/uploads/complete`, body);
    for (const parts of [etags.slice(0, 2), [...etags, etags[0]], [...etags.slice(0, 2), { part_number: 4, etag: etags[2].etag }], []]) {
      const res = await complete({ upload: created.upload, parts });
      expect(res.status, JSON.stringify(parts)).toBe(400);
    }
    const [payload, signature] = created.upload.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = `${Buffer.from(JSON.stringify({ ...claims, size: 1 })).toString('base64url')}.${signature}`;
    const res = await complete({ upload: forged, parts: etags });
    expect(res.status).toBe(403);
    expect((await res.json()).error.code).toBe('invalid_signature');
  });

  it('completes the upload, and the job reads every byte of it', async () => {
    const res = await s.post(`${ws()}/job_helpers/uploads/complete`, { upload: created.upload, parts: etags });
    expect(res.status).toBe(200);
    const object = await res.json();
    expect(object).toEqual({ s3: created.key, filename: 'big data.bin', content_type: 'application/octet-stream', size: bytes.byteLength });

    const run = await runDigest({ files: [{ s3: created.key, filename: 'big data.bin' }], note: 'sync' });
    expect(run.status).toBe(200);
    expect(run.body).toEqual({ note: 'sync', read: [{ s3: created.key, size: bytes.byteLength, filename: 'big data.bin', read: bytes.byteLength, sha256: sha256(bytes) }] });

    // Downloads: streamed by the local service; on AWS a redirect to the bucket (the api function's
    // streamed responses stop at 200 MB), whose URL works without the token.
    const download = await s.fetch(`${ws()}/job_helpers/download_s3_file?file_key=${encodeURIComponent(created.key)}`, { redirect: 'manual' });
    if (SHELL === 'aws') {
      expect(download.status).toBe(307);
      const stored = await fetch(download.headers.get('location')!);
      expect(stored.headers.get('content-disposition')).toBe('attachment; filename="big_data.bin"');
      expect(sha256(new Uint8Array(await stored.arrayBuffer()))).toBe(sha256(bytes));
    } else {
      expect(download.status).toBe(200);
      expect(download.headers.get('content-length')).toBe(String(bytes.byteLength));
      expect(sha256(new Uint8Array(await download.arrayBuffer()))).toBe(sha256(bytes));
    }

    // The async webhook gives the job the same object list.
    const id = await (await s.fetch(`${ws()}/jobs/run/p/f/uploads/digest`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ files: [object] }) })).text();
    const job = await waitForJob(s, id, 60_000);
    expect(job.result.read[0].sha256).toBe(sha256(bytes));
  });

  it("refuses keys of another script, another workspace, or with '..', and changes nothing", async () => {
    const before = await jobCount();
    const other = await runDigest({ files: [{ s3: created.key }] }, 'f/uploads/other');
    expect(other.status).toBe(403);
    const climbing = await runDigest({ files: [{ s3: `webhook_uploads/f/uploads/digest/../../../main/${created.key}` }] });
    expect(climbing.status).toBe(400);

    // The same script path in another workspace, its own completed upload: not this workspace's.
    await s.post('/api/workspaces/create', { id: 'uploads-other', name: 'Other' });
    await s.post('/api/w/uploads-other/workspaces/edit_object_storage', { enabled: true });
    await createScript({ ...s, workspace: 'uploads-other' }, 'f/uploads/digest', 'bun', 'export function main(files) { return files; }');
    const theirs: Created = await (await createUpload({ path: 'f/uploads/digest', size: 10 }, '/api/w/uploads-other')).json();
    const theirEtags = await putParts(theirs, new TextEncoder().encode('0123456789'));
    expect((await s.post('/api/w/uploads-other/job_helpers/uploads/complete', { upload: theirs.upload, parts: theirEtags })).status).toBe(200);
    const foreign = await runDigest({ files: [{ s3: theirs.key }] });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.code).toBe('upload_not_found');
    // Their upload token is no good in this workspace either.
    expect((await s.post(`${ws()}/job_helpers/uploads/complete`, { upload: theirs.upload, parts: theirEtags })).status).toBe(403);
    expect(await jobCount()).toBe(before);
  });

  it('refuses a declared size over the limit and bad create requests with clear errors', async () => {
    const tooBig = await createUpload({ path: 'f/uploads/digest', size: 6 * 1024 ** 3 });
    expect(tooBig.status).toBe(413);
    expect((await tooBig.json()).error.code).toBe('upload_too_large');
    expect((await createUpload({ path: 'f/uploads/digest', size: -1 })).status).toBe(400);
    expect((await createUpload({ path: 'f/uploads/digest', size: 10, content_type: 'not a type' })).status).toBe(400);
    expect((await createUpload({ path: 'f/uploads/none', size: 10 })).status).toBe(404);
    expect((await s.fetch(`${ws()}/job_helpers/uploads/create`, { method: 'POST', body: JSON.stringify({ path: 'f/uploads/digest', size: 10 }), token: null })).status).toBe(401);
  });

  it('uploads from a job through both client libraries, in parts, for another script to read', async () => {
    const n = PART + 100;
    const expected = new Uint8Array(n).map((_, i) => (i * 31) % 251);
    await createScript(
      s,
      'f/uploads/send_ts',
      'bun',
      `import * as svc from 'svc-client';
export async function main(n: number) {
  const bytes = new Uint8Array(n).map((_, i) => (i * 31) % 251);
  return svc.uploadFile('f/uploads/digest', bytes, { filename: 'from-ts.bin' });
}`,
    );
    await createScript(
      s,
      'f/uploads/send_py',
      'python3',
      'import svc\ndef main(n: int):\n    return svc.upload_file("f/uploads/digest", bytes((i * 31) % 251 for i in range(n)), filename="from-py.bin")\n',
    );
    for (const sender of ['f/uploads/send_ts', 'f/uploads/send_py']) {
      const sent = await runDigest({ n }, sender);
      expect(sent.status, JSON.stringify(sent.body)).toBe(200);
      expect(sent.body).toMatchObject({ size: n, s3: expect.stringMatching(/^webhook_uploads\/f\/uploads\/digest\//) });
      const read = await runDigest({ files: [sent.body] });
      expect(read.body.read[0], sender).toMatchObject({ read: n, sha256: sha256(expected) });
    }
  });

  it.runIf(SHELL === 'local')('refuses part PUTs with a forged signature, a bad part number or too many bytes', async () => {
    const small: Created = await (await createUpload({ path: 'f/uploads/digest', size: 10 })).json();
    const url = new URL(small.parts[0].url);
    const forged = new URL(url);
    forged.searchParams.set('signature', '0'.repeat(64));
    expect((await fetch(forged, { method: 'PUT', body: '0123456789' })).status).toBe(403);
    const badNumber = new URL(url);
    badNumber.searchParams.set('part_number', '2');
    expect((await fetch(badNumber, { method: 'PUT', body: '0123456789' })).status).toBe(400);
    expect((await fetch(url, { method: 'PUT', body: '0123456789+' })).status).toBe(413);
    // Nothing stored by the refused PUTs: completing with a made-up ETag fails, then the real part completes.
    expect((await s.post(`${ws()}/job_helpers/uploads/complete`, { upload: small.upload, parts: [{ part_number: 1, etag: '"x"' }] })).status).toBe(400);
    const [part] = await putParts(small, new TextEncoder().encode('0123456789'));
    expect((await s.post(`${ws()}/job_helpers/uploads/complete`, { upload: small.upload, parts: [part] })).status).toBe(200);
  });

  it.runIf(SHELL === 'local')('refuses an expired part URL and an expired upload (signed with the instance key, dated in the past)', async () => {
    const small: Created = await (await createUpload({ path: 'f/uploads/digest', size: 10 })).json();
    // What a URL handed out an hour ago looks like: the same claims and signatures, an expiry passed.
    const key = readFileSync(`${s.dataDir}/signing.key`);
    const claims = JSON.parse(Buffer.from(small.upload.split('.')[0], 'base64url').toString());
    const payload = Buffer.from(JSON.stringify({ ...claims, exp: Math.floor(Date.now() / 1000) - 60 })).toString('base64url');
    const expired = `${payload}.${createHmac('sha256', key).update(`upload\n${payload}`).digest('base64url')}`;
    const url = new URL(small.parts[0].url);
    url.searchParams.set('upload', expired);
    url.searchParams.set('signature', createHmac('sha256', key).update(`upload-part\n${expired}\n1`).digest('hex'));
    const put = await fetch(url, { method: 'PUT', body: '0123456789' });
    expect(put.status).toBe(403);
    expect((await put.json()).error.code).toBe('upload_expired');
    const complete = await s.post(`${ws()}/job_helpers/uploads/complete`, { upload: expired, parts: [{ part_number: 1, etag: '"x"' }] });
    expect(complete.status).toBe(403);
    expect((await complete.json()).error.code).toBe('upload_expired');
  });

  it.runIf(SHELL === 'local')('aborts an upload: its parts go and it can no longer complete', async () => {
    const small: Created = await (await createUpload({ path: 'f/uploads/digest', size: 10 })).json();
    const [part] = await putParts(small, new TextEncoder().encode('0123456789'));
    expect((await s.post(`${ws()}/job_helpers/uploads/abort`, { upload: small.upload })).status).toBe(200);
    expect((await s.post(`${ws()}/job_helpers/uploads/complete`, { upload: small.upload, parts: [part] })).status).toBe(400);
    const late = await fetch(small.parts[0].url, { method: 'PUT', body: '0123456789' });
    expect(late.status).toBe(400);
    expect((await late.json()).error.code).toBe('upload_not_found');
  });

  it.runIf(SHELL === 'aws')('answers a multipart webhook over the api body limit with 413 naming the upload route', async () => {
    const form = new FormData();
    form.set('files', new Blob([new Uint8Array(5 * 1024 * 1024)]), 'big.bin');
    const res = await s.fetch(`${ws()}/jobs/run/p/f/uploads/other`, { method: 'POST', body: form });
    expect(res.status).toBe(413);
    expect((await res.json()).error.message).toContain(`/api/w/${s.workspace}/job_helpers/uploads/create`);
  });

  it.runIf(SHELL === 'local')('streams a multipart webhook of 300 MB to storage without holding it in memory', async () => {
    const size = 300 * 1024 * 1024;
    // Resets the process's peak resident size (VmHWM) to what it holds now.
    writeFileSync(`/proc/${s.process.pid}/clear_refs`, '5');
    const rssBefore = residentKb(s.process.pid!, 'VmRSS');
    const boundary = 'svc-large-upload-boundary';
    const head = new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\nbig\r\n--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    const tail = new TextEncoder().encode(`\r\n--${boundary}--\r\n`);
    const chunk = new Uint8Array(1024 * 1024).fill(7);
    let sent = -1;
    // Generated as it is sent: neither this process nor the repository holds the 300 MB.
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === -1) controller.enqueue(head);
        else if (sent < size) controller.enqueue(chunk);
        else if (sent === size) controller.enqueue(tail);
        else controller.close();
        sent = sent === -1 ? 0 : sent + (sent < size ? chunk.byteLength : 1);
      },
    });
    const res = await s.fetch(`${ws()}/jobs/run_wait_result/p/f/uploads/other`, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(200);
    const [stored] = await res.json();
    expect(stored).toMatchObject({ filename: 'big.bin', size });
    // Peak resident memory of the server process over the whole request, against the body's size.
    const peakGrowthMb = (residentKb(s.process.pid!, 'VmHWM') - rssBefore) / 1024;
    expect(peakGrowthMb, `peak RSS growth ${peakGrowthMb.toFixed(1)} MB for a 300 MB body`).toBeLessThan(100);
  });
});

/** A line of /proc/<pid>/status in kB: VmRSS now, VmHWM the peak since the process started. */
function residentKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(`${field}:`));
  return Number(/(\d+)/.exec(line ?? '')?.[1]);
}
