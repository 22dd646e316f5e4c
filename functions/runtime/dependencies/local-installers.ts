import type { Confiner } from '../confinement.js';
import { NpmInstaller } from './npm-installer.js';
import { TreeCache } from './tree-cache.js';

export interface LocalDependencySettings {
  npmRegistry: string;
  npmToken: string | undefined;
  installScripts: boolean;
  cacheDir: string;
}

/** The local shell's npm installer, or null with the reason (no npm on PATH), for the start banner. */
export function localNpmInstaller(confiner: Confiner, settings: LocalDependencySettings): { installer: NpmInstaller | null; description: string } {
  try {
    const installer = new NpmInstaller({
      cache: new TreeCache(settings.cacheDir),
      confiner,
      registry: settings.npmRegistry,
      token: settings.npmToken,
      allowInstallScripts: settings.installScripts,
    });
    const scripts = settings.installScripts ? 'install scripts ALLOWED (confined)' : 'install scripts off';
    return { installer, description: `npm packages from ${installer.registry()} into ${settings.cacheDir} (${scripts})` };
  } catch (error) {
    return { installer: null, description: `npm packages CANNOT be installed: ${(error as Error).message}` };
  }
}
