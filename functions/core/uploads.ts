import { ApiError, badRequest, notFound } from './errors.js';
import type { Rights } from './permissions.js';
import type { CoreDeps } from './deps.js';

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

export async function downloadUpload(deps: Pick<CoreDeps, 'blobs'>, rights: Rights, key: string | undefined): Promise<{ bytes: Uint8Array; fileName: string }> {
  const match = key ? KEY.exec(key) : null;
  if (!key || !match || key.split('/').some((s) => s === '..' || s === '.')) {
    throw badRequest('invalid_request', 'file_key must be the s3 key a multipart webhook gave the job (webhook_uploads/...)', { field: 'file_key' });
  }
  const owner = match[1];
  if (owner) rights.check('jobs', 'read', owner);
  // Stored before uploads named their script: workspace admins only.
  else if (rights.role !== 'admin' && rights.role !== 'instance_admin') throw new ApiError(403, 'forbidden', 'only workspace admins may read uploads stored without their script path');
  const bytes = await deps.blobs.get(`${rights.workspaceId}/${key}`);
  if (!bytes) throw notFound(`file ${key}`);
  return { bytes, fileName: key.slice(key.lastIndexOf('/') + 1) };
}
