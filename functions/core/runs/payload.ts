import { badRequest } from '../common/errors.js';
import { JsonSyntaxError, parseJsonWithLimits } from '../common/json-limits.js';
import { checkNamedUploads } from '../uploads/named-uploads.js';
import { safeFileName, uploadKey } from '../uploads/uploads.js';
import type { BlobStore } from '../../ports.js';
import { utf8Text } from '../common/utf8-text.js';

/**
 * Turns a webhook request into the job's arguments: every rule of spec 4.2 and the query
 * parameters of 4.3 live here, once, for both shells.
 */

/** One part of a multipart/form-data body, in the order the body carries them. */
export type MultipartPart =
  | { kind: 'field'; name: string; value: string }
  /** A file's bytes arrive as they are read: each must be consumed (or drained) before the next part comes. */
  | { kind: 'file'; field: string; filename: string; contentType: string; body: AsyncIterable<Uint8Array> };

export interface IncomingRequest {
  contentType: string | null;
  /** The raw body; empty for GET. */
  body: Uint8Array;
  /** Query string values (the first of repeated keys). */
  query: Record<string, string>;
  /** Header values keyed by lower-case name. */
  headers: Record<string, string>;
  /** Set by the HTTP layer for multipart/form-data bodies, which it parses as a stream, part by part. */
  multipart?: AsyncIterable<MultipartPart>;
}

export interface PayloadContext {
  workspaceId: string;
  objectStorageEnabled: boolean;
  blobs: BlobStore;
  /** Instance-wide headers passed to every run (the INCLUDE_HEADERS variable). */
  includeHeaders: string[];
  /** Names a stored upload uniquely. */
  newId: () => string;
  /** The script or flow the request runs: its uploads are readable by whoever may read its jobs. */
  ownerPath?: string;
}

export async function argsFromRequest(req: IncomingRequest, ctx: PayloadContext): Promise<Record<string, unknown>> {
  const mediaType = (req.contentType ?? '').split(';')[0].trim().toLowerCase();
  if (mediaType === 'application/cloudevents-batch+json') {
    throw badRequest('cloudevents_batch_unsupported', 'Cloud Events batch mode is not supported; send one event per request');
  }
  const wrapBody = req.query.wrap_body === 'true';
  // The GET form carries its body in `payload`: that JSON is the body `raw=true` gives.
  // A multipart body is read as parts (its files may be binary); as text only for raw=true.
  const text = req.query.payload !== undefined ? decodePayloadText(req.query.payload) : req.multipart && req.query.raw !== 'true' ? '' : utf8Text(req.body);
  let args: Record<string, unknown>;

  if (req.query.payload !== undefined) {
    args = shapeParsed(parsePayloadParam(text), wrapBody);
  } else if (req.multipart) {
    args = await argsFromMultipart(req.multipart, ctx, wrapBody);
  } else if (mediaType === 'application/x-www-form-urlencoded' && !looksLikeJson(text)) {
    // curl -d sends JSON labelled as a form: JSON wins whenever the body is JSON (rule 1).
    args = shapeParsed(formToObject(new URLSearchParams(text)), wrapBody);
  } else if (mediaType === 'application/cloudevents+json') {
    args = structuredCloudEvent(text, wrapBody);
  } else {
    args = argsFromText(text, wrapBody);
  }
  // Objects the body names by key must be this target's completed uploads; multipart files were just stored.
  if (!req.multipart) await checkNamedUploads(args, ctx);
  // Binary-mode Cloud Events carry their attributes as headers, whatever the body is (JSON, form, multipart).
  if (mediaType !== 'application/cloudevents+json') {
    const metadata = binaryCloudEventMetadata(req.headers, req.contentType);
    if (metadata) args.WEBHOOK__METADATA__ = metadata;
  }

  if (req.query.raw === 'true') args.raw_string = text;
  const requested = splitList(req.query.include_header);
  const credential = requested.find((name) => CREDENTIAL_HEADERS.has(name.toLowerCase()));
  if (credential) {
    throw badRequest('credential_header', `include_header may not name ${credential}: the caller's credentials are never passed to a job`, { field: 'include_header' });
  }
  for (const name of [...ctx.includeHeaders, ...requested]) {
    if (CREDENTIAL_HEADERS.has(name.toLowerCase())) continue;
    const value = req.headers[name.toLowerCase()];
    if (value !== undefined) args[headerArgName(name)] = value;
  }
  const queryNames = splitList(req.query.include_query);
  // `?token=` is the caller's credential, as the Authorization header is.
  if (queryNames.includes('token')) throw badRequest('credential_header', "include_query may not name token: the caller's credentials are never passed to a job", { field: 'include_query' });
  for (const name of queryNames) {
    if (req.query[name] !== undefined) args[name] = req.query[name];
  }
  return args;
}

/** Headers that carry the caller's own credentials: a job's args are stored and shown, so these never go there. */
const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization', 'cookie']);

/** `X-Hub-Signature` becomes the argument `x_hub_signature`, a valid parameter name in every language. */
function headerArgName(header: string): string {
  return header.trim().toLowerCase().replace(/-/g, '_');
}

function splitList(value: string | undefined): string[] {
  return (value ?? '').split(',').map((s) => s.trim()).filter(Boolean);
}

/** Rule 3: objects are the arguments; anything else, or everything with wrap_body, goes under `body`. */
function shapeParsed(value: unknown, wrapBody: boolean): Record<string, unknown> {
  if (!wrapBody && isPlainObject(value)) return { ...value };
  return { body: value };
}

/** Rule 1: whatever the content type says, JSON is tried; what does not parse is `raw_string`. */
function argsFromText(text: string, wrapBody: boolean): Record<string, unknown> {
  if (text.trim() === '') return wrapBody ? { body: {} } : {};
  try {
    return shapeParsed(parseJsonWithLimits(text, 'the request body'), wrapBody);
  } catch (e) {
    if (!(e instanceof JsonSyntaxError)) throw e;
    return wrapBody ? { body: text, raw_string: text } : { raw_string: text };
  }
}

function decodePayloadText(payload: string): string {
  return Buffer.from(payload, 'base64url').toString('utf8');
}

function parsePayloadParam(json: string): unknown {
  try {
    return parseJsonWithLimits(json, 'query parameter payload');
  } catch (e) {
    if (!(e instanceof JsonSyntaxError)) throw e;
    throw badRequest('invalid_payload', 'query parameter payload must be JSON encoded as URL-safe base64', { field: 'payload' });
  }
}

function formToObject(form: URLSearchParams | Array<[string, string]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of form) {
    const prev = out[key];
    out[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

/**
 * Rule 5: files go to the workspace's object storage as they arrive (a file of gigabytes is never
 * held here); the script receives where they are. A request that fails part-way stores nothing.
 */
async function argsFromMultipart(multipart: AsyncIterable<MultipartPart>, ctx: PayloadContext, wrapBody: boolean): Promise<Record<string, unknown>> {
  const fields: Array<[string, string]> = [];
  const files: Array<[string, Record<string, unknown>]> = [];
  const stored: string[] = [];
  try {
    for await (const part of multipart) {
      if (part.kind === 'field') {
        fields.push([part.name, part.value]);
        continue;
      }
      if (!ctx.objectStorageEnabled) {
        throw badRequest(
          'object_storage_not_configured',
          `multipart file uploads need the workspace's object storage; enable it with POST /api/w/${ctx.workspaceId}/workspaces/edit_object_storage`,
        );
      }
      const key = uploadKey(ctx.ownerPath, ctx.newId(), safeFileName(part.filename));
      stored.push(`${ctx.workspaceId}/${key}`);
      const size = await ctx.blobs.putStream(`${ctx.workspaceId}/${key}`, part.body, part.contentType);
      files.push([part.field, { s3: key, filename: part.filename, content_type: part.contentType, size }]);
    }
  } catch (e) {
    await Promise.allSettled(stored.map((key) => ctx.blobs.delete(key)));
    throw e;
  }
  const args = formToObject(fields);
  for (const [field, file] of files) {
    const list = (args[field] as unknown[] | undefined) ?? [];
    args[field] = [...(Array.isArray(list) ? list : [list]), file];
  }
  return wrapBody ? { body: args } : args;
}

/** Rule 8, structured mode: the envelope is metadata, its `data` the payload. */
function structuredCloudEvent(text: string, wrapBody: boolean): Record<string, unknown> {
  let envelope: unknown;
  try {
    envelope = parseJsonWithLimits(text, 'the Cloud Event');
  } catch (e) {
    if (!(e instanceof JsonSyntaxError)) throw e;
    throw badRequest('invalid_cloudevent', 'a structured Cloud Event must be a JSON object');
  }
  if (!isPlainObject(envelope) || envelope.specversion !== '1.0') {
    throw badRequest('invalid_cloudevent', 'a Cloud Event needs specversion "1.0"', { field: 'specversion' });
  }
  for (const field of ['id', 'source', 'type']) {
    if (typeof envelope[field] !== 'string' || envelope[field] === '') {
      throw badRequest('invalid_cloudevent', `a Cloud Event needs the attribute ${field}`, { field });
    }
  }
  const { data, data_base64, ...metadata } = envelope;
  let payload = data;
  if (data === undefined && typeof data_base64 === 'string') {
    payload = argsFromText(Buffer.from(data_base64, 'base64').toString('utf8'), false);
  }
  const args = payload === undefined ? {} : shapeParsed(payload, wrapBody);
  return { ...args, WEBHOOK__METADATA__: metadata };
}

/** Rule 8, binary mode: attributes travel as `ce-*` headers, the body is the data. */
function binaryCloudEventMetadata(headers: Record<string, string>, contentType: string | null) {
  if (headers['ce-specversion'] === undefined) return null;
  if (headers['ce-specversion'] !== '1.0') {
    throw badRequest('invalid_cloudevent', 'a Cloud Event needs specversion "1.0"', { field: 'ce-specversion' });
  }
  const metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith('ce-')) metadata[name.slice(3)] = value;
  }
  if (contentType) metadata.datacontenttype = contentType;
  return metadata;
}

function looksLikeJson(text: string): boolean {
  try {
    parseJsonWithLimits(text, 'the request body');
    return true;
  } catch (e) {
    if (!(e instanceof JsonSyntaxError)) throw e;
    return false;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
