import { ApiError, badRequest, notFound } from '../common/errors.js';
import type { Rights } from '../identity/permissions.js';
import type { CoreDeps } from '../deps.js';

/**
 * Files a multipart webhook stored (spec 4.2 rule 5), downloaded again through the API. The key
 * names the script or flow the request ran, so the right to read that one's jobs is the right
 * to read its uploads: `webhook_uploads/<script or flow path>/<id>/<file name>`.
 */
const PREFIX = 'webhook_uploads/';
const KEY = /^webhook_uploads\/(?:((?:u|f)\/[A-Za-z0-9_.\/-]+)\/)?[A-Za-z0-9-]{1,64}\/[A-Za-z0-9._-]{1,120}$/;

export function uploadKey(ownerPath: string | undefined, id: string, fileName: string): string {
  return ownerPath ? `${PREFIX}${ownerPath}/${id}/${fileName}` : `${PREFIX}${id}/${fileName}`;
}

/** A file name a client sent, made safe as the last segment of a key. */
export function safeFileName(name: string): string {
  // Only the base name counts: a client-sent name must not steer where the file is stored.
  const base = name.split(/[\\/]/).pop() ?? '';
  const cleaned = base.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '');
  return cleaned.slice(0, 120) || 'file';
}

/**
 * The script or flow path an upload key names (undefined for keys stored before uploads named
 * it), or null when the key is no upload key at all (another shape, `.` or `..` segments).
 */
export function uploadKeyOwner(key: string): string | undefined | null {
  const match = KEY.exec(key);
  if (!match || key.split('/').some((s) => s === '..' || s === '.')) return null;
  return match[1];
}

/** S3 checks a presigned URL's expiry when the download starts, so a short one does for any size. */
const DOWNLOAD_URL_SECONDS = 300;

export type Download = { body: ReadableStream<Uint8Array>; size: number; fileName: string } | { redirect: string };

/**
 * An upload for a caller who may read the jobs of its script or flow: streamed through the service,
 * or, where the storage can hand out URLs (S3), a redirect to one, so files of gigabytes never
 * pass through the api function.
 */
export async function downloadUpload(deps: Pick<CoreDeps, 'blobs'>, rights: Rights, key: string | undefined): Promise<Download> {
  const owner = key ? uploadKeyOwner(key) : null;
  if (!key || owner === null) {
    throw badRequest('invalid_request', 'file_key must be the s3 key a multipart webhook or an upload gave the job (webhook_uploads/...)', { field: 'file_key' });
  }
  if (owner) rights.check('jobs', 'read', owner);
  // Stored before uploads named their script: workspace admins only.
  else if (rights.role !== 'admin' && rights.role !== 'instance_admin') throw new ApiError(403, 'forbidden', 'only workspace admins may read uploads stored without their script path');
  const blobKey = `${rights.workspaceId}/${key}`;
  const fileName = key.slice(key.lastIndexOf('/') + 1);
  if (deps.blobs.presignGet) {
    if ((await deps.blobs.size(blobKey)) === null) throw notFound(`file ${key}`);
    return { redirect: await deps.blobs.presignGet(blobKey, fileName, DOWNLOAD_URL_SECONDS) };
  }
  const object = await deps.blobs.getStream(blobKey);
  if (!object) throw notFound(`file ${key}`);
  return { ...object, fileName };
}
