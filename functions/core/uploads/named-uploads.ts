import { ApiError, badRequest } from '../common/errors.js';
import { uploadKeyOwner } from './uploads.js';
import type { BlobStore } from '../../ports.js';

/**
 * A webhook payload may name stored objects the way a job receives them (`{"s3": "webhook_uploads/..."}`,
 * spec 4.2 rule 5): files uploaded beforehand (upload-sessions.ts) or given to an earlier run. Each
 * must be a completed upload of this workspace for the very script or flow the call runs, so a
 * caller can neither hand a job another workspace's or another script's file nor one still being
 * uploaded. The job receives each with its stored size.
 */
const MAX_NAMED = 1000;
const UPLOAD_PREFIX = 'webhook_uploads/';

export async function checkNamedUploads(args: Record<string, unknown>, ctx: { workspaceId: string; ownerPath?: string; blobs: BlobStore }): Promise<void> {
  const named: Array<Record<string, unknown> & { s3: string }> = [];
  collect(args, named);
  if (named.length > MAX_NAMED) throw badRequest('invalid_payload', `a payload may name at most ${MAX_NAMED} stored objects`);
  for (const object of named) {
    const key = object.s3;
    const owner = uploadKeyOwner(key);
    if (owner === null) throw badRequest('invalid_payload', `${JSON.stringify(key.slice(0, 200))} is no upload key (webhook_uploads/<script or flow path>/<id>/<file name>)`, { field: 's3' });
    if (owner !== ctx.ownerPath) {
      throw new ApiError(403, 'forbidden', `${key} was uploaded for ${owner ?? 'no script'}: only a run of ${owner ?? 'that'} may be given it`);
    }
    const size = await ctx.blobs.size(`${ctx.workspaceId}/${key}`);
    if (size === null) throw badRequest('upload_not_found', `${key} is no completed upload of workspace ${ctx.workspaceId}: complete the upload first`, { field: 's3' });
    object.size = size;
  }
}

function collect(value: unknown, into: Array<Record<string, unknown> & { s3: string }>): void {
  if (Array.isArray(value)) {
    for (const item of value) collect(item, into);
  } else if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    // Only what names an upload is one: `{"s3": "my-bucket"}` elsewhere in a payload is the caller's data.
    if (typeof record.s3 === 'string' && record.s3.startsWith(UPLOAD_PREFIX)) into.push(record as Record<string, unknown> & { s3: string });
    else for (const item of Object.values(record)) collect(item, into);
  }
}
