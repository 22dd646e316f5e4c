import type { Context } from 'hono';
import { ApiError } from '../core/errors.js';
import type { IncomingRequest, UploadedFile } from '../core/payload.js';

/** Reads a webhook request into the plain shape the core's payload rules work on. */
export async function toIncoming(c: Context): Promise<IncomingRequest> {
  const contentType = c.req.header('content-type') ?? null;
  const raw = c.req.method === 'GET' || c.req.method === 'HEAD' ? new ArrayBuffer(0) : await c.req.arrayBuffer();
  const body = new Uint8Array(raw);
  const headers: Record<string, string> = {};
  c.req.raw.headers.forEach((value, name) => {
    headers[name.toLowerCase()] = value;
  });
  const incoming: IncomingRequest = { contentType, body, query: c.req.query(), headers };
  if (contentType && /^multipart\/form-data/i.test(contentType)) incoming.multipart = await parseMultipart(contentType, raw);
  return incoming;
}

async function parseMultipart(contentType: string, body: ArrayBuffer): Promise<NonNullable<IncomingRequest['multipart']>> {
  let form: FormData;
  try {
    form = await new Request('http://multipart.invalid/', { method: 'POST', headers: { 'content-type': contentType }, body }).formData();
  } catch {
    throw new ApiError(400, 'invalid_multipart', 'the multipart/form-data body could not be parsed');
  }
  const fields: Array<[string, string]> = [];
  const files: UploadedFile[] = [];
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') fields.push([name, value]);
    else files.push({ field: name, filename: value.name, contentType: value.type || 'application/octet-stream', bytes: new Uint8Array(await value.arrayBuffer()) });
  }
  return { fields, files };
}
