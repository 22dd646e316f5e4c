import { describe, expect, it } from 'vitest';
import { argsFromRequest, type IncomingRequest } from '../../functions/core/runs/payload.js';
import { ApiError } from '../../functions/core/common/errors.js';
import type { MultipartPart } from '../../functions/core/runs/payload.js';
import { MemoryBlobStore } from '../../functions/adapters/memory/memory-blob-store.js';

/** The memory adapter, with a view of its objects by key. */
class MemoryBlobs extends MemoryBlobStore {
  readonly items = { get: (key: string) => this.read(key) };
  private readonly copies = new Map<string, Uint8Array>();
  override async putStream(key: string, body: AsyncIterable<Uint8Array>, contentType: string) {
    const size = await super.putStream(key, body, contentType);
    this.copies.set(key, (await this.get(key))!);
    return size;
  }
  private read(key: string) {
    return this.copies.get(key);
  }
}

/** A multipart body as the HTTP layer hands it over, part by part. */
async function* parts(fields: Array<[string, string]>, files: Array<{ field: string; filename: string; contentType: string; bytes: Uint8Array }>): AsyncIterable<MultipartPart> {
  for (const [name, value] of fields) yield { kind: 'field', name, value };
  for (const f of files) yield { kind: 'file', field: f.field, filename: f.filename, contentType: f.contentType, body: [f.bytes] as unknown as AsyncIterable<Uint8Array> };
}

const enc = new TextEncoder();
function req(body: string, contentType: string | null = 'application/json', query: Record<string, string> = {}, headers: Record<string, string> = {}): IncomingRequest {
  return { contentType, body: enc.encode(body), query, headers };
}
function ctx(overrides: Partial<Parameters<typeof argsFromRequest>[1]> = {}) {
  let n = 0;
  return { workspaceId: 'ws', objectStorageEnabled: true, blobs: new MemoryBlobs(), includeHeaders: [], newId: () => `id${++n}`, ...overrides };
}

describe('argsFromRequest', () => {
  it('maps object keys to arguments and wraps anything else under body', async () => {
    expect(await argsFromRequest(req('{"a":1}'), ctx())).toEqual({ a: 1 });
    expect(await argsFromRequest(req('[1]'), ctx())).toEqual({ body: [1] });
    expect(await argsFromRequest(req('3'), ctx())).toEqual({ body: 3 });
    expect(await argsFromRequest(req('null'), ctx())).toEqual({ body: null });
    expect(await argsFromRequest(req(''), ctx())).toEqual({});
  });

  it('forces wrapping with wrap_body=true', async () => {
    expect(await argsFromRequest(req('{"a":1}', 'application/json', { wrap_body: 'true' }), ctx())).toEqual({ body: { a: 1 } });
  });

  it('keeps an unparseable body as raw_string whatever its content type', async () => {
    expect(await argsFromRequest(req('{oops', 'application/json'), ctx())).toEqual({ raw_string: '{oops' });
    expect(await argsFromRequest(req('hello', null), ctx())).toEqual({ raw_string: 'hello' });
    expect(await argsFromRequest(req('{"a":2}', 'text/plain'), ctx())).toEqual({ a: 2 });
  });

  it('adds raw_string with raw=true without dropping the parsed arguments', async () => {
    expect(await argsFromRequest(req('{"a": 1}', 'application/json', { raw: 'true' }), ctx())).toEqual({ a: 1, raw_string: '{"a": 1}' });
  });

  it('parses URL-encoded forms, repeated keys into arrays', async () => {
    expect(await argsFromRequest(req('a=1&a=2&b=x', 'application/x-www-form-urlencoded'), ctx())).toEqual({ a: ['1', '2'], b: 'x' });
  });

  it('decodes the GET payload parameter and rejects a bad one', async () => {
    const payload = Buffer.from('{"k":"v?"}').toString('base64url');
    expect(await argsFromRequest(req('', null, { payload }), ctx())).toEqual({ k: 'v?' });
    await expect(argsFromRequest(req('', null, { payload: '!!' }), ctx())).rejects.toMatchObject({ status: 400, code: 'invalid_payload' });
  });

  it('passes listed headers (as identifiers) and query args, including instance-wide headers', async () => {
    const got = await argsFromRequest(
      req('{}', 'application/json', { include_header: 'X-Sig, X-Missing', include_query: 'q', q: '1', other: '2' }, { 'x-sig': 's', 'x-env': 'e' }),
      ctx({ includeHeaders: ['X-Env'] }),
    );
    expect(got).toEqual({ x_sig: 's', x_env: 'e', q: '1' });
  });

  it('stores multipart files and passes where they are', async () => {
    const blobs = new MemoryBlobs();
    const incoming: IncomingRequest = {
      ...req('', 'multipart/form-data; boundary=x'),
      multipart: parts([['note', 'hi']], [{ field: 'doc', filename: '../../etc/passwd', contentType: 'text/plain', bytes: enc.encode('abc') }]),
    };
    const got = await argsFromRequest(incoming, ctx({ blobs }));
    expect(got.note).toBe('hi');
    const [stored] = got.doc as Array<{ s3: string }>;
    expect(stored.s3).toBe('webhook_uploads/id1/passwd');
    expect(new TextDecoder().decode(blobs.items.get(`ws/${stored.s3}`))).toBe('abc');
  });

  it('refuses multipart files without object storage', async () => {
    const incoming: IncomingRequest = {
      ...req('', 'multipart/form-data; boundary=x'),
      multipart: parts([], [{ field: 'f', filename: 'a', contentType: 'text/plain', bytes: enc.encode('') }]),
    };
    await expect(argsFromRequest(incoming, ctx({ objectStorageEnabled: false }))).rejects.toBeInstanceOf(ApiError);
  });

  it('reads Cloud Events in structured and binary mode and refuses batches', async () => {
    const envelope = { specversion: '1.0', id: '1', source: '/s', type: 't', data: { a: 1 } };
    expect(await argsFromRequest(req(JSON.stringify(envelope), 'application/cloudevents+json'), ctx())).toEqual({
      a: 1,
      WEBHOOK__METADATA__: { specversion: '1.0', id: '1', source: '/s', type: 't' },
    });
    const binary = await argsFromRequest(req('{"a":1}', 'application/json', {}, { 'ce-specversion': '1.0', 'ce-id': '9', 'ce-type': 't', 'ce-source': '/s' }), ctx());
    expect(binary).toEqual({ a: 1, WEBHOOK__METADATA__: { specversion: '1.0', id: '9', type: 't', source: '/s', datacontenttype: 'application/json' } });
    await expect(argsFromRequest(req('[]', 'application/cloudevents-batch+json'), ctx())).rejects.toMatchObject({ status: 400 });
    await expect(argsFromRequest(req('{"specversion":"1.0"}', 'application/cloudevents+json'), ctx())).rejects.toMatchObject({ status: 400 });
  });
});

describe('argsFromRequest with curl -d', () => {
  it('parses a JSON body sent with the form content type curl uses by default', async () => {
    expect(await argsFromRequest(req('{"name":"Ada"}', 'application/x-www-form-urlencoded'), ctx())).toEqual({ name: 'Ada' });
  });
});
