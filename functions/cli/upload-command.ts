import { openAsBlob } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { CreatedUploadView, StoredObjectView } from '../core/views/run-views.js';
import { CliError, EXIT, type ExitCode } from './errors.js';
import { connect, type ConnectionFlags } from './connection.js';
import type { Io } from './io.js';

/**
 * `svc upload <path> <file>`: a file of any size for the script or flow at `path`, through an
 * upload session (README: Large uploads). The file is read part by part as each is PUT to its
 * URL; what it prints is the object to name in the webhook payload.
 */

export async function uploadCommand(path: string, file: string, flags: ConnectionFlags & { contentType?: string; filename?: string }, io: Io): Promise<ExitCode> {
  const remote = connect(flags, io);
  // openAsBlob only says "Unable to open file as blob": stat first for the reason.
  const info = await stat(file).catch((e: NodeJS.ErrnoException) => {
    throw new CliError(EXIT.failed, `cannot read ${file}: ${e.code ?? e.message}`);
  });
  if (!info.isFile()) throw new CliError(EXIT.failed, `cannot read ${file}: not a file`);
  const blob = await openAsBlob(file);
  const created = (await remote.request('POST', '/job_helpers/uploads/create', {
    path,
    size: blob.size,
    filename: flags.filename ?? basename(file),
    content_type: flags.contentType ?? 'application/octet-stream',
  })) as CreatedUploadView;
  try {
    const parts = [];
    for (const { part_number: n, url } of created.parts) {
      // No token: the part URL is its own credential (and S3 would refuse a second one).
      const res = await fetch(url, { method: 'PUT', body: blob.slice((n - 1) * created.part_size, n * created.part_size) });
      if (!res.ok) throw new CliError(EXIT.failed, `part ${n} of ${created.parts.length}: ${res.status} ${(await res.text()).slice(0, 300)}`);
      parts.push({ part_number: n, etag: res.headers.get('etag') });
      io.err(`part ${n} of ${created.parts.length} sent`);
    }
    const stored = (await remote.request('POST', '/job_helpers/uploads/complete', { upload: created.upload, parts })) as StoredObjectView;
    io.out(JSON.stringify(stored));
    return EXIT.ok;
  } catch (e) {
    await remote.request('POST', '/job_helpers/uploads/abort', { upload: created.upload }).catch(() => undefined);
    throw e;
  }
}
