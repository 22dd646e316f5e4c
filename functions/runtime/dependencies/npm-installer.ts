import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DependencyInstaller, Ecosystem } from '../../ports.js';
import { readNpmLock } from '../../core/dependencies/npm-lock.js';
import type { Confiner } from '../confinement.js';
import { resolveExecutable, SANDBOX_PATH } from '../sandbox-process.js';
import { lastLines, runConfined } from './confined-install.js';
import { removeTree, TreeCache } from './tree-cache.js';

/** An install or a resolution that takes longer than this is stopped and fails. */
const NPM_TIMEOUT_MS = 300_000;

export interface NpmInstallerOptions {
  /** The root of the installed trees (README: Dependencies, the cache). */
  cache: TreeCache;
  confiner: Confiner;
  /** NPM_CONFIG_REGISTRY: where packages come from. */
  registry: string;
  /** A private registry's token: written to the installer's own .npmrc, never to a job. */
  token?: string;
  /** SVC_NPM_INSTALL_SCRIPTS=1: packages' install scripts run (confined); off by default. */
  allowInstallScripts: boolean;
}

/** Why a version's packages could not be installed: every run of it fails with this. */
export class DependencyInstallError extends Error {}

/** The tree a name's root package.json is given, so npm never reads the script's own name. */
const ROOT_NAME = 'svc-script-dependencies';

/**
 * Resolves TypeScript scripts' imports with npm and installs the locks (`npm ci`), each run
 * confined like a job, into the shared read-only tree cache. Resolution happens at create (a
 * lock-only run: package metadata, no tarballs); installation right after, off the request path.
 */
export class NpmInstaller implements DependencyInstaller {
  readonly ecosystems: readonly Ecosystem[] = ['npm'];
  private readonly npmCli: string;
  private readonly registryUrl: string;

  constructor(private readonly options: NpmInstallerOptions) {
    this.npmCli = realpathSync(resolveExecutable('npm'));
    this.registryUrl = options.registry.endsWith('/') ? options.registry : `${options.registry}/`;
  }

  registry(): string {
    return this.registryUrl;
  }

  async resolve(_ecosystem: Ecosystem, requirements: Record<string, string>): Promise<{ ok: true; lock: string } | { ok: false; message: string }> {
    return this.inJail('resolve', async (dir, run) => {
      await writeFile(join(dir, 'package.json'), rootPackage(requirements));
      const result = await run(['install', '--package-lock-only', '--ignore-scripts']);
      if (!result.ok) return { ok: false, message: lastLines(result.output, dir, /^npm (error|ERR!)/) };
      return { ok: true, lock: await readFile(join(dir, 'package-lock.json'), 'utf8') };
    });
  }

  prepare(_ecosystem: Ecosystem, lock: string): void {
    this.tree(lock, true).catch(() => undefined);
  }

  /**
   * The installed tree of `lock` (its `node_modules` is what scripts import), installing it when
   * missing; null when the lock names no package. A failed install throws DependencyInstallError.
   */
  tree(lock: string, retry = false): Promise<string | null> {
    const parsed = readNpmLock(lock);
    if (!parsed || Object.keys(parsed.dependencies).length === 0) return Promise.resolve(null);
    const key = createHash('sha256').update(JSON.stringify([parsed.packages, this.options.allowInstallScripts])).digest('hex').slice(0, 32);
    return this.options.cache.ensure('npm', key, () => this.install(lock, parsed.dependencies), retry);
  }

  private async install(lock: string, dependencies: Record<string, string>): Promise<string> {
    let built: string | undefined;
    let used: string | undefined;
    const failure = await this.inJail('install', async (dir, run) => {
      used = dir;
      await writeFile(join(dir, 'package.json'), rootPackage(dependencies));
      await writeFile(join(dir, 'package-lock.json'), lock);
      const result = await run(['ci', ...(this.options.allowInstallScripts ? [] : ['--ignore-scripts'])]);
      if (!result.ok) return `${packagesNamedIn(result.output, lock)}${lastLines(result.output, dir, /^npm (error|ERR!)/)}`;
      // The token and npm's own cache never go into the tree.
      for (const name of ['.npmrc', '.npm', '.tmp']) await rm(join(dir, name), { recursive: true, force: true });
      built = dir;
      return null;
    }, true);
    if (failure !== null || !built) {
      if (used) await removeTree(used);
      throw new DependencyInstallError(`the packages of this version could not be installed from ${this.registryUrl}:\n${failure}`);
    }
    return built;
  }

  /**
   * Runs `work` in a fresh directory of the cache owned by a new jail's uid; the directory is
   * removed afterwards unless `keep` (an install hands it to the cache).
   */
  private async inJail<T>(prefix: string, work: (dir: string, run: (args: string[]) => ReturnType<typeof runConfined>) => Promise<T>, keep = false): Promise<T> {
    const jail = this.options.confiner.open();
    const dir = await mkdtemp(join(await this.options.cache.workDir(), `${prefix}-`));
    let succeeded = false;
    try {
      if (jail.uid !== undefined) await chown(dir, jail.uid, jail.uid);
      await mkdir(join(dir, '.tmp'));
      await writeFile(join(dir, '.npmrc'), this.npmrc(), { mode: 0o600 });
      for (const name of ['.tmp', '.npmrc']) if (jail.uid !== undefined) await chown(join(dir, name), jail.uid, jail.uid);
      const run = (args: string[]) =>
        runConfined({
          dir,
          jail,
          command: process.execPath,
          // One quick retry: npm's default (two, backing off up to a minute) holds a failed
          // install, and every run waiting on it, for minutes.
          args: [this.npmCli, ...args, '--no-audit', '--no-fund', '--no-update-notifier', '--fetch-retries=1', '--fetch-retry-mintimeout=1000', '--fetch-retry-maxtimeout=3000'],
          env: {
            PATH: SANDBOX_PATH,
            HOME: dir,
            TMPDIR: join(dir, '.tmp'),
            LANG: 'C.UTF-8',
            npm_config_userconfig: join(dir, '.npmrc'),
            npm_config_cache: join(dir, '.npm'),
          },
          timeoutMs: NPM_TIMEOUT_MS,
        });
      const result = await work(dir, run);
      succeeded = true;
      return result;
    } finally {
      await jail.release();
      if (!keep || !succeeded) await removeTree(dir);
    }
  }

  /** The installer's own config: the registry, and its token where one is set (never in argv or env). */
  private npmrc(): string {
    const lines = [`registry=${this.registryUrl}`];
    if (this.options.token) lines.push(`${this.registryUrl.replace(/^https?:/, '')}:_authToken=${this.options.token}`);
    return `${lines.join('\n')}\n`;
  }
}

/** The locked packages npm's output names by tarball or integrity (its EINTEGRITY error names neither package nor version). */
function packagesNamedIn(output: string, lock: string): string {
  const parsed = readNpmLock(lock);
  const named = Object.entries(parsed?.packages ?? {})
    .filter(([path, entry]) => path !== '' && ((entry.integrity && output.includes(entry.integrity)) || (entry.resolved && output.includes(entry.resolved))))
    .map(([path, entry]) => `${path.replace(/^(.*\/)?node_modules\//, '')}@${entry.version ?? '?'}`);
  return named.length > 0 ? `${named.join(', ')}: ` : '';
}

function rootPackage(dependencies: Record<string, string>): string {
  return `${JSON.stringify({ name: ROOT_NAME, version: '0.0.0', private: true, dependencies }, null, 2)}\n`;
}
