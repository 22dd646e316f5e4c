import type { DependencyInstaller, Ecosystem } from '../../ports.js';
import type { Confiner } from '../confinement.js';
import { MAX_CONCURRENT_INSTALLS } from './confined-install.js';
import { installRoute, type InstallRoute } from './install-proxy.js';
import { NpmInstaller } from './npm-installer.js';
import { PipInstaller } from './pip-installer.js';
import { DependencyInstallError, TreeCache } from './tree-cache.js';

export interface LocalDependencySettings {
  npmRegistry: string;
  npmToken: string | undefined;
  installScripts: boolean;
  pipIndexUrl: string;
  pipExtraIndexUrls: string[];
  cacheDir: string;
  /** SVC_DEPS_CACHE_MB: the most the trees may take together, in bytes; undefined: no bound. */
  cacheMaxBytes?: number;
  /**
   * SVC_DEPS_WAIT_SECONDS: the longest a run waits for its version's tree (its install's turn and
   * the install), in milliseconds; undefined: no bound (the dependency builder, whose install is
   * the work itself).
   */
  waitMs?: number;
}

/**
 * The local shell's installers (npm for TypeScript, pip for Python) over one tree cache: the core
 * asks them to resolve and prepare at create, the runner for a version's tree at run.
 */
export class LocalDependencies implements DependencyInstaller {
  readonly ecosystems: readonly Ecosystem[];

  constructor(
    private readonly npm: NpmInstaller | null,
    private readonly pip: PipInstaller | null,
    /** One line per ecosystem for the start banner. */
    readonly description: string,
    /** How the installers reach the network; closed with the service. */
    private readonly route?: InstallRoute,
    /** The longest `tree` waits (LocalDependencySettings.waitMs). */
    private readonly waitMs?: number,
  ) {
    this.ecosystems = [...(npm ? (['npm'] as const) : []), ...(pip ? (['pypi'] as const) : [])];
  }

  registry(ecosystem: Ecosystem): string {
    return this.installer(ecosystem).registry;
  }

  resolve(ecosystem: Ecosystem, requirements: Record<string, string>): Promise<{ ok: true; lock: string } | { ok: false; message: string }> {
    return this.installer(ecosystem).resolve(requirements);
  }

  prepare(ecosystem: Ecosystem, lock: string): void {
    this.installer(ecosystem).tree(lock, true).catch(() => undefined);
  }

  /**
   * The installed tree of a version's lock (installing it when missing), or null when there is
   * nothing to install. A run waits for it at most `waitMs`: installs take turns (at most
   * MAX_CONCURRENT_INSTALLS at once, each up to its installer's timeout), so behind a queue of
   * distinct locks a run would otherwise wait, holding its worker, as long as the queue is long.
   * Past it the run fails with DependencyInstallError; the install goes on, for later runs.
   */
  tree(ecosystem: Ecosystem, lock: string, retry = false): Promise<string | null> {
    const installer = ecosystem === 'npm' ? this.npm : this.pip;
    if (!installer) return Promise.resolve(null);
    const tree = installer.tree(lock, retry);
    return this.waitMs === undefined ? tree : withinWait(tree, this.waitMs, ecosystem);
  }

  /** Keeps a lock's tree in the cache while a job runs with it (taken before `tree`). */
  hold(ecosystem: Ecosystem, lock: string): () => void {
    const installer = ecosystem === 'npm' ? this.npm : this.pip;
    return installer ? installer.hold(lock) : () => undefined;
  }

  /** Lets go of the installers' network namespaces or proxy (the service stops). */
  close(): Promise<void> {
    return this.route?.close() ?? Promise.resolve();
  }

  private installer(ecosystem: Ecosystem): NpmInstaller | PipInstaller {
    const installer = ecosystem === 'npm' ? this.npm : this.pip;
    if (!installer) throw new Error(`this server installs no ${ecosystem} packages`);
    return installer;
  }
}

/** `tree`, or DependencyInstallError once it took longer than `waitMs`. */
function withinWait<T>(tree: Promise<T>, waitMs: number, ecosystem: Ecosystem): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const what = ecosystem === 'npm' ? 'packages' : 'distributions';
      reject(
        new DependencyInstallError(
          `the ${what} of this version were not installed within ${waitMs / 1000}s (SVC_DEPS_WAIT_SECONDS): installs run ${MAX_CONCURRENT_INSTALLS} at a time and this one is still waiting for its turn or installing; it goes on, and a later run uses its tree`,
        ),
      );
    }, waitMs);
    timer.unref();
  });
  return Promise.race([tree, late]).finally(() => clearTimeout(timer));
}

/** The local shell's installers; an ecosystem whose tool is missing (no npm, no python3) is left out and said so. */
export function localDependencies(confiner: Confiner, settings: LocalDependencySettings): LocalDependencies {
  const cache = new TreeCache(settings.cacheDir, settings.cacheMaxBytes);
  // The installers reach the registry and indexes, and otherwise only what a job may reach.
  const route = installRoute(confiner, [settings.npmRegistry, settings.pipIndexUrl, ...settings.pipExtraIndexUrls]);
  const lines: string[] = [];
  let npm: NpmInstaller | null = null;
  let pip: PipInstaller | null = null;
  try {
    npm = new NpmInstaller({ cache, confiner, route, registry: settings.npmRegistry, token: settings.npmToken, allowInstallScripts: settings.installScripts });
    lines.push(`npm packages from ${npm.registry} (${settings.installScripts ? 'install scripts ALLOWED, confined' : 'install scripts off'})`);
  } catch (error) {
    lines.push(`npm packages CANNOT be installed: ${(error as Error).message}`);
  }
  try {
    pip = new PipInstaller({ cache, confiner, route, indexUrl: settings.pipIndexUrl, extraIndexUrls: settings.pipExtraIndexUrls });
    lines.push(`Python wheels from ${pip.registry}`);
  } catch (error) {
    lines.push(`Python distributions CANNOT be installed: ${(error as Error).message}`);
  }
  const trees = `trees in ${settings.cacheDir}${settings.cacheMaxBytes === undefined ? '' : ` (at most ${Math.round(settings.cacheMaxBytes / 1024 / 1024)} MB, least recently used removed first)`}`;
  return new LocalDependencies(npm, pip, `${lines.join('; ')}; ${route.description}; ${trees}`, route, settings.waitMs);
}
