import { createHmac } from 'node:crypto';
import { z } from 'zod';
import { ApiError, badRequest } from '../common/errors.js';
import { newUuid, sameSignature } from '../common/crypto.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';
import { resolveForCaller } from '../runs/start-run.js';
import { safeFileName, uploadKey, uploadKeyOwner } from './uploads.js';
import { parseBody } from '../common/validation.js';
import { UploadRejected, type UploadedPart } from '../../ports.js';
import { MAX_PARTS } from './upload-settings.js';

/**
 * Large uploads (README: Large uploads). A client declares a file (size, type, the script or flow
 * it is for), PUTs its bytes in parts straight to where they are stored, and completes the upload;
 * a webhook call then names the object (`{"s3": key}`), and the job receives it as it would a
 * multipart file (spec 4.2 rule 5). On S3 the parts go to presigned UploadPart URLs, so the api
 * function never carries them; locally to this service's own part route, signed like resume URLs.
 *
 * The upload's state travels in a signed token the client holds (`upload`), not in the store:
 * the workspace, key, storage upload id, declared size and part layout, and when it expires.
 * Until completion the object does not exist, so an unfinished upload cannot be named.
 */

// The settings live in upload-settings.ts (CoreConfig carries them); the shells' config readers import them from here.
export { DEFAULT_UPLOAD_SETTINGS, uploadSettingsFromEnv, type UploadSettings } from './upload-settings.js';

export const createBody = z.strictObject({
  /** The script or flow that will receive the file: its jobs may read it, its runners may upload it. */
  path: z.string().min(1).max(255),
  size: z.number().int().min(1),
  content_type: z.string().regex(/^[\w.+-]+\/[\w.+-]+$/, 'a media type such as application/octet-stream').max(200).optional(),
  filename: z.string().min(1).max(255).optional(),
});

export const completeBody = z.strictObject({
  upload: z.string().min(1).max(4096),
  parts: z.array(z.object({ part_number: z.number().int(), etag: z.string().min(1).max(200) })).min(1).max(MAX_PARTS),
});

export const abortBody = z.strictObject({ upload: z.string().min(1).max(4096) });

/** What the signed token carries. */
interface UploadClaims {
  w: string;
  k: string;
  u: string;
  size: number;
  part: number;
  ct: string;
  fn: string;
  exp: number;
}

export interface CreatedUpload {
  upload: string;
  key: string;
  part_size: number;
  parts: Array<{ part_number: number; url: string }>;
  expires_at: string;
}

/** The object a completed upload is, the same shape a multipart webhook gives a job (rule 5). */
export interface StoredObject {
  s3: string;
  filename: string;
  content_type: string;
  size: number;
}

export async function createUpload(deps: CoreDeps, rights: Rights, objectStorageEnabled: boolean, body: unknown): Promise<CreatedUpload> {
  const req = parseBody(createBody, body);
  // Who asks comes first: a caller who may not run the path learns nothing of the workspace's settings.
  rights.check('jobs', 'run', req.path);
  const settings = deps.config.uploads;
  if (!objectStorageEnabled) {
    throw badRequest('object_storage_not_configured', `uploads need the workspace's object storage; enable it with POST /api/w/${rights.workspaceId}/workspaces/edit_object_storage`);
  }
  if (req.size > settings.maxBytes) {
    throw new ApiError(413, 'upload_too_large', `the declared size of ${req.size} bytes exceeds the upload limit of ${settings.maxBytes} bytes`, { field: 'size' });
  }
  const runnable = await resolveForCaller(deps, rights, { by: 'path', path: req.path });
  const ownerPath = runnable.kind === 'flow' ? runnable.flow.path : runnable.script.path;
  const filename = req.filename ?? 'upload';
  const key = uploadKey(ownerPath, newUuid(), safeFileName(filename));
  const contentType = req.content_type ?? 'application/octet-stream';
  const uploadId = await deps.blobs.createMultipartUpload(`${rights.workspaceId}/${key}`, contentType);
  const exp = Math.floor(deps.clock.now().getTime() / 1000) + settings.urlSeconds;
  const claims: UploadClaims = { w: rights.workspaceId, k: key, u: uploadId, size: req.size, part: settings.partBytes, ct: contentType, fn: filename, exp };
  const upload = signToken(deps.config.signingKey, claims);
  const count = partCount(claims);
  const parts = [];
  for (let n = 1; n <= count; n++) parts.push({ part_number: n, url: await partUrl(deps, claims, upload, n) });
  return { upload, key, part_size: settings.partBytes, parts, expires_at: new Date(exp * 1000).toISOString() };
}

/**
 * A part PUT to this service (the local shell's part URLs). The URL is the credential: its
 * signature names the upload and the part, and it expires with the upload.
 */
export async function putUploadPart(deps: CoreDeps, workspaceId: string, query: Record<string, string>, body: AsyncIterable<Uint8Array>): Promise<UploadedPart> {
  if (!deps.blobs.putPart) throw new ApiError(404, 'not_found', 'parts of uploads go to the URLs the create call answered, not through this service');
  const claims = openToken(deps, workspaceId, query.upload);
  const n = partNumber(claims, query.part_number);
  if (!sameSignature(query.signature ?? '', partSignature(deps.config.signingKey, query.upload!, n))) throw new ApiError(403, 'invalid_signature', 'this part URL is not valid: its signature does not match');
  const size = n < partCount(claims) ? claims.part : claims.size - claims.part * (n - 1);
  try {
    return await deps.blobs.putPart(`${workspaceId}/${claims.k}`, claims.u, n, body, size);
  } catch (e) {
    if (e instanceof UploadRejected && e.reason === 'too_large') throw new ApiError(413, 'payload_too_large', `${e.message}: part ${n} of this upload is ${size} bytes`);
    if (e instanceof UploadRejected) throw badRequest('upload_not_found', `${e.message}; create a new upload`);
    throw e;
  }
}

/** Joins the parts into the object, which from then on a webhook call may name. */
export async function completeUpload(deps: CoreDeps, rights: Rights, body: unknown): Promise<StoredObject> {
  const req = parseBody(completeBody, body);
  const claims = openToken(deps, rights.workspaceId, req.upload);
  rights.check('jobs', 'run', uploadOwner(claims));
  const count = partCount(claims);
  const numbers = req.parts.map((p) => p.part_number).sort((a, b) => a - b);
  if (numbers.length !== count || numbers.some((n, i) => n !== i + 1)) {
    throw badRequest('invalid_upload_parts', `this upload has parts 1 to ${count}: name each once, with the ETag its PUT answered`, { field: 'parts' });
  }
  const key = `${rights.workspaceId}/${claims.k}`;
  let size: number;
  try {
    size = await deps.blobs.completeMultipartUpload(key, claims.u, req.parts.map((p) => ({ partNumber: p.part_number, etag: p.etag })));
  } catch (e) {
    if (e instanceof UploadRejected) throw badRequest('invalid_upload_parts', e.message, { field: 'parts' });
    throw e;
  }
  if (size !== claims.size) {
    // Not what was declared (and limited): the object goes, so nothing can name it.
    await deps.blobs.delete(key);
    throw badRequest('invalid_upload_parts', `the parts hold ${size} bytes, not the ${claims.size} declared; upload again`, { field: 'parts' });
  }
  return { s3: claims.k, filename: claims.fn, content_type: claims.ct, size };
}

export async function abortUpload(deps: CoreDeps, rights: Rights, body: unknown): Promise<void> {
  const req = parseBody(abortBody, body);
  const claims = openToken(deps, rights.workspaceId, req.upload, { allowExpired: true });
  rights.check('jobs', 'run', uploadOwner(claims));
  await deps.blobs.abortMultipartUpload(`${rights.workspaceId}/${claims.k}`, claims.u);
}

function partCount(claims: Pick<UploadClaims, 'size' | 'part'>): number {
  return Math.max(1, Math.ceil(claims.size / claims.part));
}

function partNumber(claims: UploadClaims, value: string | undefined): number {
  const n = Number(value);
  if (!/^\d{1,5}$/.test(value ?? '') || n < 1 || n > partCount(claims)) {
    throw badRequest('invalid_upload_parts', `part_number must be 1 to ${partCount(claims)} for this upload`, { field: 'part_number' });
  }
  return n;
}

/** Keys of uploads always name their script or flow: webhook_uploads/<path>/<id>/<file>. */
function uploadOwner(claims: UploadClaims): string {
  return uploadKeyOwner(claims.k) ?? '';
}

async function partUrl(deps: CoreDeps, claims: UploadClaims, upload: string, n: number): Promise<string> {
  const key = `${claims.w}/${claims.k}`;
  if (deps.blobs.presignPart) return deps.blobs.presignPart(key, claims.u, n, claims.exp - Math.floor(deps.clock.now().getTime() / 1000));
  const query = new URLSearchParams({ upload, part_number: String(n), signature: partSignature(deps.config.signingKey, upload, n) });
  return `${deps.config.baseInternalUrl}/api/w/${claims.w}/job_helpers/uploads/part?${query}`;
}

function partSignature(key: Uint8Array, upload: string, n: number): string {
  return createHmac('sha256', key).update(`upload-part\n${upload}\n${n}`).digest('hex');
}

function signToken(key: Uint8Array, claims: UploadClaims): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${payload}.${tokenSignature(key, payload)}`;
}

function tokenSignature(key: Uint8Array, payload: string): string {
  return createHmac('sha256', key).update(`upload\n${payload}`).digest('base64url');
}

/** The claims of a token this instance signed for this workspace, or a 4xx that says why not. */
function openToken(deps: CoreDeps, workspaceId: string, token: string | undefined, opts: { allowExpired?: boolean } = {}): UploadClaims {
  const [payload, signature, extra] = (token ?? '').split('.');
  if (!payload || extra !== undefined || !sameSignature(signature ?? '', tokenSignature(deps.config.signingKey, payload))) {
    throw new ApiError(403, 'invalid_signature', 'this upload is not valid: its signature does not match');
  }
  const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')) as UploadClaims;
  if (claims.w !== workspaceId) throw new ApiError(403, 'forbidden', 'this upload belongs to another workspace');
  if (!opts.allowExpired && claims.exp * 1000 <= deps.clock.now().getTime()) throw new ApiError(403, 'upload_expired', `this upload expired at ${new Date(claims.exp * 1000).toISOString()}; create a new one`);
  return claims;
}
