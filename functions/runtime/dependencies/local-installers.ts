import type { DependencyInstaller, Ecosystem } from '../../ports.js';
import type { Confiner } from '../confinement.js';
import { installRoute, type InstallRoute } from './install-proxy.js';
import { NpmInstaller } from './npm-installer.js';
import { PipInstaller } from './pip-installer.js';
import { TreeCache } from './tree-cache.js';

export interface LocalDependencySettings {
  npmRegistry: string;
  npmToken: string | undefined;
  installScripts: boolean;
  pipIndexUrl: string;
  pipExtraIndexUrls: string[];
  cacheDir: string;
  /** SVC_DEPS_CACHE_MB: the most the trees may take together, in bytes; undefined: no bound. */
  cacheMaxBytes?: number;
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

  /** The installed tree of a version's lock (installing it when missing), or null when there is nothing to install. */
  tree(ecosystem: Ecosystem, lock: string, retry = false): Promise<string | null> {
    const installer = ecosystem === 'npm' ? this.npm : this.pip;
    return installer ? installer.tree(lock, retry) : Promise.resolve(null);
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
  return new LocalDependencies(npm, pip, `${lines.join('; ')}; ${route.description}; ${trees}`, route);
}
