import { describe, expect, it } from 'vitest';
import { checkNamedUploads } from '../../../functions/core/uploads/named-uploads.js';
import { MemoryBlobStore } from '../../../functions/adapters/memory/memory-blob-store.js';

/** Which parts of a webhook payload name stored uploads (and are checked), and which are the caller's data. */
describe('objects a payload names', () => {
  it("leaves an `s3` field that names no upload alone, as the caller's data", async () => {
    const args = { config: { s3: 'my-bucket', region: 'eu-west-1' }, targets: [{ s3: 's3://logs/2026/' }] };
    await checkNamedUploads(args, { workspaceId: 'main', ownerPath: 'f/x/y', blobs: new MemoryBlobStore() });
    expect(args).toEqual({ config: { s3: 'my-bucket', region: 'eu-west-1' }, targets: [{ s3: 's3://logs/2026/' }] });
  });

  it('checks what names an upload: one not completed is refused', async () => {
    const args = { file: { s3: 'webhook_uploads/f/x/y/abc/report.pdf' } };
    await expect(checkNamedUploads(args, { workspaceId: 'main', ownerPath: 'f/x/y', blobs: new MemoryBlobStore() })).rejects.toMatchObject({ status: 400, code: 'upload_not_found' });
  });
});
