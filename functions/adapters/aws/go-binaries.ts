import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import type { BlobStore, CodeRunner, GoTarget, Language, PrebuiltBinary, ScriptCompiler } from '../../ports.js';
import { goContentMarker } from '../../runtime/go-source.js';

/** A binary this big does not fit the sandbox's /tmp beside its jobs; the gzip must not inflate past it. */
const MAX_BINARY_BYTES = 64 * 1024 * 1024;
/** Long enough for the sandbox to start and fetch; a leaked URL soon stops working. */
const URL_LIFETIME_SECONDS = 300;

/** ELF e_machine of each GOARCH the sandbox may run on. */
const ELF_MACHINE: Record<GoTarget['goarch'], number> = { amd64: 0x3e, arm64: 0xb7 };

/** The sandbox's target as the stack announces it (SANDBOX_ARCH: Lambda's x86_64 or arm64). */
export function goTargetFromEnv(env: NodeJS.ProcessEnv): GoTarget {
  const arch = env.SANDBOX_ARCH ?? 'arm64';
  if (arch === 'x86_64') return { goos: 'linux', goarch: 'amd64' };
  if (arch === 'arm64') return { goos: 'linux', goarch: 'arm64' };
  throw new Error(`SANDBOX_ARCH must be x86_64 or arm64, not ${arch}`);
}

/**
 * Where a workspace's binary of a Go script content is kept. Per workspace, so no workspace can
 * plant the binary another's identical script would run.
 */
export function goBinaryKey(workspaceId: string, content: string): string {
  return `go-binaries/${encodeURIComponent(workspaceId)}/${createHash('sha256').update(content).digest('hex')}`;
}

/**
 * The AWS shell's Go "compiler": it builds nothing (no toolchain on Lambda); it checks a binary
 * built by the CLI (or by hand) and keeps it in the bucket beside the script versions.
 */
export class UploadedGoBinaries implements ScriptCompiler {
  readonly languages: readonly Language[] = ['go'];

  constructor(
    private readonly blobs: BlobStore,
    readonly prebuiltTarget: GoTarget,
  ) {}

  async compile(language: Language, content: string, prebuilt?: PrebuiltBinary): Promise<{ ok: true } | { ok: false; message: string }> {
    if (language !== 'go' || !prebuilt) return { ok: false, message: `this server builds no ${language} scripts` };
    const checked = checkBinary(content, prebuilt, this.prebuiltTarget);
    if (typeof checked === 'string') return { ok: false, message: `go_binary: ${checked}` };
    await this.blobs.put(goBinaryKey(prebuilt.workspaceId, content), checked, 'application/octet-stream');
    return { ok: true };
  }
}

/** The binary, or why it is refused. */
export function checkBinary(content: string, prebuilt: PrebuiltBinary, target: GoTarget): Uint8Array | string {
  let binary: Buffer;
  try {
    binary = gunzipSync(Buffer.from(prebuilt.gzipBase64, 'base64'), { maxOutputLength: MAX_BINARY_BYTES });
  } catch {
    return `not a gzip of at most ${MAX_BINARY_BYTES} bytes (send gzip -c main | base64 -w0)`;
  }
  if (createHash('sha256').update(binary).digest('hex') !== prebuilt.sha256) return 'its sha256 is not that of the binary sent';
  // ELF magic, 64-bit, little-endian; e_machine at offset 18.
  if (binary.length < 64 || binary.readUInt32BE(0) !== 0x7f454c46 || binary[4] !== 2 || binary[5] !== 1) {
    return `not a 64-bit little-endian ELF executable: build it with GOOS=${target.goos} GOARCH=${target.goarch}`;
  }
  if (binary.readUInt16LE(18) !== ELF_MACHINE[target.goarch]) return `built for another architecture: the sandbox runs GOOS=${target.goos} GOARCH=${target.goarch}`;
  // The generated wrapper embeds the content's hash: a binary of another script (or of an older
  // version of this one) is refused rather than run under this script's name.
  if (!binary.includes(goContentMarker(content))) return "not built from this script's content with svc's wrapper (svc sync push builds it; docs/scripts.md, Go scripts on AWS)";
  return binary;
}

/**
 * Hands each Go job a presigned GET URL of its binary: the sandbox has no credentials, and a
 * binary is larger than the 6 MB an invocation payload may carry.
 */
export function withGoBinaryUrls(runner: CodeRunner, s3: S3Client, bucketName: string): CodeRunner {
  return {
    async run(req, hooks, signal) {
      if (req.language !== 'go') return runner.run(req, hooks, signal);
      const command = new GetObjectCommand({ Bucket: bucketName, Key: goBinaryKey(req.workspaceId, req.content) });
      const goBinaryUrl = await getSignedUrl(s3, command, { expiresIn: URL_LIFETIME_SECONDS });
      return runner.run({ ...req, goBinaryUrl }, hooks, signal);
    },
    close: () => runner.close(),
  };
}
