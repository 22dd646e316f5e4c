/**
 * `npm run bench:uploads`: a large file (BENCH_UPLOAD_BYTES, 5 GiB by default) into the local
 * service both ways (README: Large uploads): through an upload session (parts PUT to their signed
 * URLs, complete, a webhook naming the object) and as one streamed multipart webhook. Prints the
 * throughput and the server's peak resident memory during each, which must stay far below the
 * file's size. Bytes are generated as they are sent; the service's data directory is temporary.
 * Nothing here is a pass/fail test (test/http/large-uploads.test.ts streams 300 MB in the suite).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const TOKEN = 'bench-admin-token';
const SIZE = Number(process.env.BENCH_UPLOAD_BYTES ?? 5 * 1024 ** 3);
const CHUNK = new Uint8Array(1024 * 1024).map((_, i) => i % 251);

/** `bytes` of generated data as a stream, a chunk at a time. */
function generated(bytes: number, head = new Uint8Array(), tail = new Uint8Array()): ReadableStream<Uint8Array> {
  let sent = 0;
  let stage = 0;
  return new ReadableStream({
    pull(controller) {
      if (stage === 0) {
        stage = 1;
        if (head.byteLength) return controller.enqueue(head);
      }
      if (sent < bytes) {
        const n = Math.min(CHUNK.byteLength, bytes - sent);
        sent += n;
        return controller.enqueue(n === CHUNK.byteLength ? CHUNK : CHUNK.subarray(0, n));
      }
      if (stage === 1 && tail.byteLength) {
        stage = 2;
        return controller.enqueue(tail);
      }
      controller.close();
    },
  });
}

function residentMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(`${field}:`));
  return Number(/(\d+)/.exec(line ?? '')?.[1]) / 1024;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-upload-'));
  const child = spawn(process.execPath, [join(ROOT, 'bin/svc.js'), 'serve'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH!, HOME: process.env.HOME!, PORT: '0', SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: TOKEN, SVC_MAX_UPLOAD_BYTES: String(Math.max(SIZE, 1)) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const base = await new Promise<string>((ok) => {
      let out = '';
      child.stdout!.on('data', (d) => {
        out += d;
        const m = /svc listening on (http:\/\/\S+)/.exec(out);
        if (m) ok(m[1]);
      });
    });
    const api = (path: string, init: RequestInit = {}) => fetch(`${base}/api/w/main${path}`, { ...init, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...init.headers } });
    await api('/workspaces/edit_object_storage', { method: 'POST', body: JSON.stringify({ enabled: true }) });
    await api('/scripts/create', { method: 'POST', body: JSON.stringify({ path: 'f/bench/files', language: 'bun', content: 'export function main(files) { return files.map((f) => f.size); }' }) });
    const pid = child.pid!;
    const gib = (SIZE / 1024 ** 3).toFixed(2);

    // Upload session: parts PUT in order to their signed URLs.
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    let before = residentMb(pid, 'VmRSS');
    let started = performance.now();
    const created = await (await api('/job_helpers/uploads/create', { method: 'POST', body: JSON.stringify({ path: 'f/bench/files', size: SIZE, filename: 'big.bin' }) })).json();
    const parts = [];
    for (const part of created.parts as Array<{ part_number: number; url: string }>) {
      const bytes = Math.min(created.part_size, SIZE - (part.part_number - 1) * created.part_size);
      const res = await fetch(part.url, { method: 'PUT', body: generated(bytes), duplex: 'half' } as RequestInit);
      parts.push({ part_number: part.part_number, etag: res.headers.get('etag') });
    }
    const object = await (await api('/job_helpers/uploads/complete', { method: 'POST', body: JSON.stringify({ upload: created.upload, parts }) })).json();
    const sizes = await (await api('/jobs/run_wait_result/p/f/bench/files', { method: 'POST', body: JSON.stringify({ files: [object] }) })).json();
    let seconds = (performance.now() - started) / 1000;
    console.log(`upload session  ${gib} GiB in ${parts.length} parts: ${seconds.toFixed(1)} s, ${(SIZE / 1024 ** 2 / seconds).toFixed(0)} MiB/s; job saw ${sizes[0]} bytes; server RSS ${before.toFixed(0)} MB, peak ${residentMb(pid, 'VmHWM').toFixed(0)} MB`);

    // One streamed multipart webhook.
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    before = residentMb(pid, 'VmRSS');
    started = performance.now();
    const boundary = 'svc-bench-boundary';
    const head = new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    const tail = new TextEncoder().encode(`\r\n--${boundary}--\r\n`);
    const res = await api('/jobs/run_wait_result/p/f/bench/files', { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body: generated(SIZE, head, tail), duplex: 'half' } as RequestInit);
    const streamed = await res.json();
    if (!Array.isArray(streamed)) throw new Error(`multipart webhook: ${res.status} ${JSON.stringify(streamed)}`);
    seconds = (performance.now() - started) / 1000;
    console.log(`multipart webhook ${gib} GiB: ${seconds.toFixed(1)} s, ${(SIZE / 1024 ** 2 / seconds).toFixed(0)} MiB/s; job saw ${streamed[0]} bytes; server RSS ${before.toFixed(0)} MB, peak ${residentMb(pid, 'VmHWM').toFixed(0)} MB`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((done) => child.once('exit', done));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
