/**
 * The dependency builder Lambda (docs/dependencies-aws.md): resolves a script version's imports to
 * a lock for the api (awaited at create), and builds a lock's tree off the run path (started by the
 * api, not awaited): npm or pip install it into /tmp, confined as far as the platform allows and
 * without install scripts, and the tree goes to the bucket as `deps/<ecosystem>/<key>.tgz`, or the
 * installer's error as `deps/<ecosystem>/<key>.error.txt`. Its role may write only under `deps/`.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { secretSource, secretsManagerReader } from '../adapters/aws/aws-config.js';
import { builderRequestSchema, treeObjects, type BuilderRequest, type ResolveAnswer } from '../adapters/aws/dependency-builds.js';
import { S3BlobStore, s3ClientConfig } from '../adapters/aws/s3-blob-store.js';
import { errorText, log } from '../core/common/logger.js';
import type { BlobStore, Ecosystem } from '../ports.js';
import { Confiner } from '../runtime/confinement.js';
import { localDependencies, type LocalDependencies } from '../runtime/dependencies/local-installers.js';
import { packTree } from '../runtime/dependencies/tree-archive.js';
import { DependencyInstallError, removeTree } from '../runtime/dependencies/tree-cache.js';
import { treeKey } from '../runtime/dependencies/tree-keys.js';
import { limitsFromEnv, uidRangeFromEnv } from '../runtime/job-limits.js';

interface Builder {
  installers: LocalDependencies;
  blobs: BlobStore;
}

let builder: Promise<Builder> | undefined;

function builderFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<Builder> {
  builder ??= makeBuilder(env).catch((error: unknown) => {
    builder = undefined; // the next invocation tries again (Secrets Manager unreachable, say)
    throw error;
  });
  return builder;
}

async function makeBuilder(env: NodeJS.ProcessEnv): Promise<Builder> {
  const bucketName = env.BUCKET_NAME;
  if (!bucketName) throw new Error('BUCKET_NAME must be set');
  // Its own uid range, apart from the sandbox's, where both run on one machine (the emulator tier).
  const confiner = new Confiner({ limits: limitsFromEnv(env), uidRange: uidRangeFromEnv({ SVC_JOB_UID_RANGE: env.DEPS_BUILD_UID_RANGE || '201000-201099' }) });
  const installers = localDependencies(confiner, {
    npmRegistry: env.NPM_CONFIG_REGISTRY || 'https://registry.npmjs.org/',
    npmToken: await npmToken(env),
    // Never on AWS: a package's install script would run beside the builder's credentials.
    installScripts: false,
    pipIndexUrl: env.PIP_INDEX_URL || 'https://pypi.org/simple/',
    pipExtraIndexUrls: (env.PIP_EXTRA_INDEX_URL ?? '').split(/\s+/).filter(Boolean),
    cacheDir: env.DEPS_BUILD_DIR || '/tmp/svc-deps-build',
  });
  log.info('dependency builder', { installers: installers.description, confinement: confiner.describe() });
  return { installers, blobs: new S3BlobStore({ client: new S3Client(s3ClientConfig()), bucketName }) };
}

/**
 * A private registry's token, read once per cold start from the secret the stack names
 * (NPM_TOKEN_SECRET_ARN), or outside AWS from SVC_NPM_TOKEN. It goes to the installer's own
 * .npmrc only (npm-installer.ts), never into a tree, a log or a job.
 */
async function npmToken(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const source = secretSource(env, 'NPM_TOKEN_SECRET_ARN', 'SVC_NPM_TOKEN');
  if (!source) return undefined;
  if ('value' in source) return source.value;
  const client = new SecretsManagerClient({});
  try {
    return (await secretsManagerReader(client)(source.arn)).trim() || undefined;
  } finally {
    client.destroy();
  }
}

/** One resolution (answered) or one build (stored in the bucket; the answer is for logs only). */
export async function handler(event: unknown): Promise<ResolveAnswer | { ok: boolean; key: string | null }> {
  const parsed = builderRequestSchema.safeParse(event);
  if (!parsed.success) return { ok: false, message: `the builder request is invalid: ${parsed.error.message}` };
  const { installers, blobs } = await builderFromEnv();
  const request: BuilderRequest = parsed.data;
  if (request.action === 'resolve') return installers.resolve(request.ecosystem, request.requirements);
  const lock = request.lock ?? (await storedLock(blobs, request.ecosystem, request.lock_object!));
  if (lock === null) return { ok: false, message: `the lock ${request.lock_object} is not in the bucket, or is not the lock its name says` };
  return build(installers, blobs, request.ecosystem, lock);
}

/** A lock too long for the request, put in the bucket by the api under its tree's key: read, and checked to be that tree's. */
async function storedLock(blobs: BlobStore, ecosystem: Ecosystem, object: string): Promise<string | null> {
  const body = await blobs.get(object);
  if (!body) return null;
  const lock = new TextDecoder().decode(body);
  const key = treeKey(ecosystem, lock);
  return key && treeObjects(ecosystem, key).lock === object ? lock : null;
}

async function build(installers: LocalDependencies, blobs: BlobStore, ecosystem: Ecosystem, lock: string): Promise<{ ok: boolean; key: string | null }> {
  const key = treeKey(ecosystem, lock);
  if (!key) return { ok: true, key: null };
  const objects = treeObjects(ecosystem, key);
  // Built already (another version with the same lock, or a retried event): nothing to do.
  if ((await blobs.size(objects.archive)) !== null) return { ok: true, key };
  let tree: string | null;
  try {
    tree = await installers.tree(ecosystem, lock, true);
  } catch (error) {
    if (!(error instanceof DependencyInstallError)) throw error; // Lambda retries the event
    await blobs.put(objects.error, new TextEncoder().encode(error.message), 'text/plain; charset=utf-8');
    log.warn('dependency build failed', { ecosystem, key, error: error.message });
    return { ok: false, key };
  }
  if (!tree) return { ok: true, key };
  try {
    await blobs.put(objects.archive, await packTree(tree), 'application/gzip');
    // An earlier failure of this lock (an unreachable registry, say) no longer stands.
    await blobs.delete(objects.error);
  } finally {
    // The function's /tmp is small: the tree lives in the bucket now.
    await removeTree(tree).catch((error: unknown) => log.warn('could not remove a built tree', { error: errorText(error) }));
  }
  log.info('dependency tree built', { ecosystem, key });
  return { ok: true, key };
}
