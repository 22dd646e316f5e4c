/**
 * The instance's settings for large uploads (README: Large uploads), apart from the upload
 * sessions that use them: CoreConfig (core/deps.ts) carries them, and upload-sessions.ts needs
 * the core's deps, so the settings live in this leaf that both may import.
 */

export interface UploadSettings {
  /** The largest file an upload (or a streamed multipart webhook file) may declare. */
  maxBytes: number;
  /** Every part but the last has this size (S3: at least 5 MiB, at most 10,000 parts). */
  partBytes: number;
  /** How long part URLs and the upload itself stay valid. */
  urlSeconds: number;
}

const MIB = 1024 * 1024;
export const DEFAULT_UPLOAD_SETTINGS: UploadSettings = { maxBytes: 5 * 1024 * MIB, partBytes: 64 * MIB, urlSeconds: 3600 };
/** S3's limits on multipart uploads, which both shells keep so a client works against either. */
const MIN_PART_BYTES = 5 * MIB;
export const MAX_PARTS = 10_000;
/** Presigned URLs signed with a Lambda role's credentials cannot outlive them anyway. */
const MAX_URL_SECONDS = 7 * 24 * 3600;

/** Reads the settings (`<prefix>MAX_UPLOAD_BYTES`, `<prefix>UPLOAD_PART_BYTES`, `<prefix>UPLOAD_URL_SECONDS`). */
export function uploadSettingsFromEnv(env: NodeJS.ProcessEnv, prefix: 'SVC_' | ''): UploadSettings {
  const read = (name: string, fallback: number) => {
    const value = env[`${prefix}${name}`];
    if (value === undefined || value === '') return fallback;
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${prefix}${name}: expected a positive integer, got ${JSON.stringify(value)}`);
    return n;
  };
  const settings = {
    maxBytes: read('MAX_UPLOAD_BYTES', DEFAULT_UPLOAD_SETTINGS.maxBytes),
    partBytes: read('UPLOAD_PART_BYTES', DEFAULT_UPLOAD_SETTINGS.partBytes),
    urlSeconds: read('UPLOAD_URL_SECONDS', DEFAULT_UPLOAD_SETTINGS.urlSeconds),
  };
  if (settings.partBytes < MIN_PART_BYTES) throw new Error(`${prefix}UPLOAD_PART_BYTES: at least ${MIN_PART_BYTES} (S3's smallest part)`);
  if (Math.ceil(settings.maxBytes / settings.partBytes) > MAX_PARTS) throw new Error(`${prefix}MAX_UPLOAD_BYTES / ${prefix}UPLOAD_PART_BYTES: at most ${MAX_PARTS} parts`);
  if (settings.urlSeconds > MAX_URL_SECONDS) throw new Error(`${prefix}UPLOAD_URL_SECONDS: at most ${MAX_URL_SECONDS}`);
  return settings;
}
