import { realpathSync } from 'node:fs';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { npmLockSourceProblem, readNpmLock, type NpmLock } from '../../core/dependencies/npm-lock.js';
import type { Confiner } from '../confinement.js';
import { resolveExecutable } from '../sandbox-process.js';
import { inInstallJail, lastLines, type ConfinedResult, type InstallFiles } from './confined-install.js';
import type { InstallRoute } from './install-proxy.js';
import { DependencyInstallError, type TreeCache } from './tree-cache.js';
import { treeKey } from './tree-keys.js';

/** An install (both its steps together) or a resolution that takes longer than this is stopped and fails. */
const NPM_TIMEOUT_MS = 300_000;

export interface NpmInstallerOptions {
  /** The root of the installed trees (README: Dependencies, the cache). */
  cache: TreeCache;
  confiner: Confiner;
  /** NPM_CONFIG_REGISTRY: where packages come from. */
  registry: string;
  /** A private registry's token: written to the installer's own .npmrc, never to a job. */
  token?: string;
  /** SVC_NPM_INSTALL_SCRIPTS=1: packages' install scripts run (confined, without the token); off by default. */
  allowInstallScripts: boolean;
  /** How npm and what it starts reach the network (install-proxy.ts); none: the host's network. */
  route?: InstallRoute;
}

/** The name the lock's root package is given, so npm never reads the script's own name. */
const ROOT_NAME = 'svc-script-dependencies';

/**
 * Resolves TypeScript scripts' imports with npm and installs the locks (`npm ci`), each run
 * confined like a job, into the shared read-only tree cache. Resolution happens at create (a
 * lock-only run: package metadata, no tarballs); installation right after, off the request path.
 */
export class NpmInstaller {
  private readonly npmCli: string;
  readonly registry: string;

  constructor(private readonly options: NpmInstallerOptions) {
    this.npmCli = realpathSync(resolveExecutable('npm'));
    this.registry = options.registry.endsWith('/') ? options.registry : `${options.registry}/`;
  }

  async resolve(requirements: Record<string, string>): Promise<{ ok: true; lock: string } | { ok: false; message: string }> {
    return this.inJail('resolve', async (dir, npm) => {
      await writeFile(join(dir, 'package.json'), rootPackage(requirements));
      const result = await npm(['install', '--package-lock-only', '--ignore-scripts']);
      if (!result.ok) return { ok: false, message: this.withoutToken(lastLines(result.output, dir, /^npm (error|ERR!)/)) } as const;
      return { ok: true, lock: await readFile(join(dir, 'package-lock.json'), 'utf8') } as const;
    });
  }

  /**
   * The installed tree of `lock` (its `node_modules` is what scripts import), installing it when
   * missing; null when the lock names no package. A failed install throws DependencyInstallError.
   */
  tree(lock: string, retry = false): Promise<string | null> {
    const parsed = readNpmLock(lock);
    const key = treeKey('npm', lock, this.options.allowInstallScripts);
    if (!parsed || !key) return Promise.resolve(null);
    return this.options.cache.ensure('npm', key, () => this.install(parsed), retry);
  }

  /** Keeps the lock's tree from being removed (the cache's bound) until the returned function is called. */
  hold(lock: string): () => void {
    const key = treeKey('npm', lock, this.options.allowInstallScripts);
    return key ? this.options.cache.hold(key) : () => undefined;
  }

  private async install(parsed: NpmLock): Promise<string> {
    // Checked at create too; a lock stored before that check, or resolved by npm, is checked here.
    const problem = npmLockSourceProblem(parsed, this.registry);
    if (problem) throw new DependencyInstallError(`the packages of this version cannot be installed from ${this.registry}: ${problem}`);
    // npm gets the packages the tree key names and nothing else of the lock's text.
    const lock = `${JSON.stringify({ name: ROOT_NAME, version: '0.0.0', lockfileVersion: 3, requires: true, packages: parsed.packages }, null, 2)}\n`;
    const outcome = await this.inJail(
      'install',
      async (dir, npm, withoutCredentials) => {
        await writeFile(join(dir, 'package.json'), rootPackage(parsed.dependencies));
        await writeFile(join(dir, 'package-lock.json'), lock);
        // Fetched and unpacked with the token; no package code runs beside it.
        let result = await npm(['ci', '--ignore-scripts']);
        if (result.ok && this.options.allowInstallScripts) {
          // The packages' scripts run in a second npm ci, as npm ci runs them (optional packages
          // whose script fails left out, node-gyp's default, the order), from the tarballs the
          // first left in npm's cache: npm asks the registry for nothing, and neither it nor the
          // scripts it starts have the token. npm rebuild would not leave a failed optional out.
          await withoutCredentials();
          result = await npm(['ci']);
        }
        if (!result.ok) return { ok: false, message: this.withoutToken(`${packagesNamedIn(result.output, lock)}${lastLines(result.output, dir, /^npm (error|ERR!)/)}`) } as const;
        // The token and npm's own cache never go into the tree.
        for (const name of ['.npmrc', '.npm', '.tmp']) await rm(join(dir, name), { recursive: true, force: true });
        return { ok: true, dir } as const;
      },
      (result) => result.ok,
    );
    if (!outcome.ok) throw new DependencyInstallError(`the packages of this version could not be installed from ${this.registry}:\n${outcome.message}`);
    return outcome.dir;
  }

  /**
   * `work` runs npm in a jail with the installer's config, token included; `withoutCredentials`
   * takes every credential away before the next npm (see `withoutCredentials`).
   */
  private async inJail<T>(
    prefix: string,
    work: (dir: string, npm: (args: string[]) => Promise<ConfinedResult>, withoutCredentials: () => Promise<void>) => Promise<T>,
    keep?: (result: T) => boolean,
  ): Promise<T> {
    const proxy = await this.options.route?.proxyUrl();
    return inInstallJail<T>({
      confiner: this.options.confiner,
      parent: await this.options.cache.workDir(),
      network: this.options.route?.network,
      prefix,
      files: { '.npmrc': this.npmrc(proxy, this.options.token) },
      keep,
      work: (dir, run, replaceFiles) =>
        work(
          dir,
          (args) =>
            run(
              process.execPath,
              // One quick retry: npm's default (two, backing off up to a minute) holds a failed
              // install, and every run waiting on it, for minutes.
              [this.npmCli, ...args, '--no-audit', '--no-fund', '--no-update-notifier', '--fetch-retries=1', '--fetch-retry-mintimeout=1000', '--fetch-retry-maxtimeout=3000'],
              { npm_config_userconfig: join(dir, '.npmrc'), npm_config_cache: join(dir, '.npm') },
              NPM_TIMEOUT_MS,
            ),
          () => withoutCredentials(dir, replaceFiles, this.npmrc(proxy, undefined)),
        ),
    });
  }

  /** `message` (npm's output, shown to the script's author) with the token, should npm or a registry echo it, masked. */
  private withoutToken(message: string): string {
    const { token } = this.options;
    return token ? message.replaceAll(token, '<SVC_NPM_TOKEN>') : message;
  }

  /** The installer's own config: the registry, and `token` where given (never in argv or env). */
  private npmrc(proxy: string | undefined, token: string | undefined): string {
    const lines = [
      `registry=${this.registry}`,
      // Registry packages only (npm 11): a git, file, folder or URL dependency a package names is refused.
      'allow-git=none',
      'allow-file=none',
      'allow-directory=none',
      'allow-remote=none',
      ...(proxy ? [`proxy=${proxy}`, `https-proxy=${proxy}`, 'noproxy='] : []),
    ];
    if (token) lines.push(`${this.registry.replace(/^https?:/, '')}:_authToken=${token}`);
    return `${lines.join('\n')}\n`;
  }
}

/**
 * Takes every credential of the install away before packages' scripts run in its directory, as
 * its uid: the config becomes `config` (the registry and the proxy, no token), npm's logs go and
 * its temporary directory is emptied. npm's cache keeps only its content (`_cacache`: the tarballs,
 * by integrity, and their index, which keeps no request's Authorization header), which the next
 * npm ci installs from.
 */
async function withoutCredentials(dir: string, replaceFiles: InstallFiles, config: string): Promise<void> {
  const cache = join(dir, '.npm');
  const others = (await readdir(cache).catch(() => [] as string[])).filter((name) => name !== '_cacache');
  await replaceFiles({ '.npmrc': config, ...Object.fromEntries(others.map((name) => [join('.npm', name), null])) });
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
