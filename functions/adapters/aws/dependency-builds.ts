import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import { z } from 'zod';
import { lockEcosystem } from '../../core/dependencies/lock-script.js';
import { log, errorText } from '../../core/common/logger.js';
import type { BlobStore, CodeRunner, DependencyInstaller, Ecosystem, RunRequest } from '../../ports.js';
import { urlWithoutCredentials } from '../../runtime/dependencies/index-url.js';
import { treeKey } from '../../runtime/dependencies/tree-keys.js';

/**
 * Dependencies on AWS (README: docs/dependencies-aws.md). The api resolves a new version's imports
 * by asking the dependency builder function (it has npm and pip; the api has neither), then starts
 * the build of the lock without waiting. The builder installs the tree, packs it and stores it in
 * the bucket under `deps/<ecosystem>/<tree key>.tgz`, or the installer's error beside it. A run
 * waits for one of the two, then hands the sandbox a presigned URL of the archive: the sandbox
 * holds no credentials, and unpacks it once per warm environment.
 */

/**
 * The longest lock a build request carries itself. A Lambda Event invocation takes at most 256 KB,
 * and npm's lock of a large tree is more: a longer lock is put in the bucket beside the tree it
 * makes (`deps/<ecosystem>/<tree key>.lock`) and the request names that object instead.
 */
export const INLINE_LOCK_CHARS = 64 * 1024;

export const builderRequestSchema = z.discriminatedUnion('action', [
  z.object({ action: z.literal('resolve'), ecosystem: z.enum(['npm', 'pypi']), requirements: z.record(z.string(), z.string()) }),
  z
    .object({
      action: z.literal('build'),
      ecosystem: z.enum(['npm', 'pypi']),
      lock: z.string().max(INLINE_LOCK_CHARS).optional(),
      lock_object: z.string().regex(/^deps\/(npm|pypi)\/[0-9a-f]{32}\.lock$/).optional(),
    })
    .refine((r) => (r.lock === undefined) !== (r.lock_object === undefined), 'a build names its lock or the object holding it, one of the two'),
]);
export type BuilderRequest = z.infer<typeof builderRequestSchema>;
export type BuildRequest = Extract<BuilderRequest, { action: 'build' }>;
export type ResolveAnswer = { ok: true; lock: string } | { ok: false; message: string };

/** How the api reaches the builder: awaited for a resolution, started and left for a build. */
export interface DependencyBuilderInvoke {
  resolve(ecosystem: Ecosystem, requirements: Record<string, string>): Promise<ResolveAnswer>;
  startBuild(request: Omit<BuildRequest, 'action'>): Promise<void>;
}

/** Where a tree's archive, its build error and (when too long for the request) its lock are kept in the bucket. */
export function treeObjects(ecosystem: Ecosystem, key: string): { archive: string; error: string; lock: string } {
  return { archive: `deps/${ecosystem}/${key}.tgz`, error: `deps/${ecosystem}/${key}.error.txt`, lock: `deps/${ecosystem}/${key}.lock` };
}

/** The builder as a Lambda function: RequestResponse for a resolution, Event (queued by Lambda, retried twice) for a build. */
export function lambdaBuilderInvoke(client: LambdaClient, functionName: string): DependencyBuilderInvoke {
  const payload = (request: BuilderRequest) => new TextEncoder().encode(JSON.stringify(request));
  return {
    async resolve(ecosystem, requirements) {
      const response = await client.send(new InvokeCommand({ FunctionName: functionName, Payload: payload({ action: 'resolve', ecosystem, requirements }) }));
      const text = new TextDecoder().decode(response.Payload ?? new Uint8Array());
      if (response.FunctionError) throw new Error(`the dependency builder failed: ${text.slice(0, 500)}`);
      return JSON.parse(text) as ResolveAnswer;
    },
    async startBuild(request) {
      await client.send(new InvokeCommand({ FunctionName: functionName, InvocationType: 'Event', Payload: payload({ action: 'build', ...request }) }));
    },
  };
}

export interface BuiltDependenciesSettings {
  npmRegistry: string;
  pipIndexUrl: string;
}

/** The api's DependencyInstaller: resolution and builds happen in the builder function. */
export class BuiltDependencies implements DependencyInstaller {
  readonly ecosystems: readonly Ecosystem[] = ['npm', 'pypi'];

  constructor(
    private readonly builder: DependencyBuilderInvoke,
    private readonly settings: BuiltDependenciesSettings,
    /** Where a lock too long for the build request goes (the data bucket). */
    private readonly blobs: BlobStore,
  ) {}

  /** The registry or index as messages name it (an index URL's credentials left out). */
  registry(ecosystem: Ecosystem): string {
    if (ecosystem === 'pypi') return urlWithoutCredentials(this.settings.pipIndexUrl);
    return this.settings.npmRegistry.endsWith('/') ? this.settings.npmRegistry : `${this.settings.npmRegistry}/`;
  }

  resolve(ecosystem: Ecosystem, requirements: Record<string, string>): Promise<ResolveAnswer> {
    return this.builder.resolve(ecosystem, requirements);
  }

  prepare(ecosystem: Ecosystem, lock: string): void {
    this.startBuild(ecosystem, lock).catch((error: unknown) => log.error('could not start a dependency build', { ecosystem, error: errorText(error) }));
  }

  private async startBuild(ecosystem: Ecosystem, lock: string): Promise<void> {
    if (lock.length <= INLINE_LOCK_CHARS) return this.builder.startBuild({ ecosystem, lock });
    const key = treeKey(ecosystem, lock);
    if (!key) return; // installs nothing
    const object = treeObjects(ecosystem, key).lock;
    await this.blobs.put(object, new TextEncoder().encode(lock), 'application/json');
    await this.builder.startBuild({ ecosystem, lock_object: object });
  }
}

export interface DependencyUrlOptions {
  /** How long a run waits for a build before failing (DEPS_BUILD_WAIT_SECONDS; the builder's timeout and then some). */
  maxWaitMs: number;
  /** How long the URL the sandbox fetches the archive from works. */
  urlSeconds?: number;
}

/**
 * Hands each job of a version with a lock the URL of its tree's archive, once built. A run of a
 * version still building waits for the archive (polling the bucket: the builder is another
 * function); one whose build failed fails with the builder's message, as the local shell's does.
 */
export function withDependencyUrls(runner: CodeRunner, blobs: BlobStore, options: DependencyUrlOptions): CodeRunner {
  return {
    async run(req, hooks, signal) {
      const located = await locateTree(req, blobs, options, signal);
      if (located === null) return runner.run(req, hooks, signal);
      if ('error' in located) return { ok: false, error: located.error };
      return runner.run({ ...req, dependencies: located }, hooks, signal);
    },
    close: () => runner.close(),
  };
}

type Located = null | { error: { name: string; message: string } } | NonNullable<RunRequest['dependencies']>;

async function locateTree(req: RunRequest, blobs: BlobStore, options: DependencyUrlOptions, signal: AbortSignal): Promise<Located> {
  const ecosystem = lockEcosystem(req.language);
  const key = req.lock && ecosystem ? treeKey(ecosystem, req.lock) : null;
  if (!ecosystem || !key) return null;
  const objects = treeObjects(ecosystem, key);
  const started = Date.now();
  for (let delay = 250; ; delay = Math.min(delay * 2, 2_000)) {
    if ((await blobs.size(objects.archive)) !== null) {
      if (!blobs.presignGet) return { error: { name: 'DependencyInstallFailed', message: 'this bucket gives no download URLs' } };
      return { key, url: await blobs.presignGet(objects.archive, `${key}.tgz`, options.urlSeconds ?? 300) };
    }
    const failed = await blobs.get(objects.error);
    if (failed) return { error: { name: 'DependencyInstallFailed', message: new TextDecoder().decode(failed) } };
    if (signal.aborted) return { error: { name: 'Canceled', message: 'the job was canceled while its dependencies were being built' } };
    if (Date.now() - started > options.maxWaitMs) {
      return { error: { name: 'DependencyInstallFailed', message: `the dependencies of this version were not built within ${Math.round(options.maxWaitMs / 1000)}s: create the version again to build them again` } };
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}
