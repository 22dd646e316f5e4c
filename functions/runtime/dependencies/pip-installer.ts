import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Confiner } from '../confinement.js';
import { pythonLockRequirements, readPythonLock } from '../../core/dependencies/python-imports.js';
import { resolveExecutable } from '../sandbox-process.js';
import { inInstallJail, lastLines, type ConfinedResult } from './confined-install.js';
import { urlWithoutCredentials } from './index-url.js';
import type { InstallRoute } from './install-proxy.js';
import { DependencyInstallError, type TreeCache } from './tree-cache.js';
import { treeKey } from './tree-keys.js';

const PIP_TIMEOUT_MS = 300_000;

export interface PipInstallerOptions {
  cache: TreeCache;
  confiner: Confiner;
  /** PIP_INDEX_URL: a PEP 503 simple index (PyPI's by default). */
  indexUrl: string;
  /** PIP_EXTRA_INDEX_URL: more indexes, space-separated. */
  extraIndexUrls: string[];
  /** How pip and what it starts reach the network (install-proxy.ts); none: the host's network. */
  route?: InstallRoute;
}

interface PipReport {
  install?: { metadata?: { name?: string; version?: string }; download_info?: { archive_info?: { hashes?: Record<string, string>; hash?: string } } }[];
}

/**
 * Resolves Python scripts' distributions with pip and installs the locks into the shared tree
 * cache, with the interpreter jobs run on, confined like a job. Wheels only: no sdist is ever built,
 * so no package code runs at install. The lock is pip's hash-checking format, one
 * `name==version --hash=sha256:...` line per distribution of the whole tree.
 */
export class PipInstaller {
  /** The index as messages and the start banner name it: without the credentials its URL may carry. */
  readonly registry: string;
  private readonly python: string;

  constructor(private readonly options: PipInstallerOptions) {
    this.python = resolveExecutable('python3');
    this.registry = urlWithoutCredentials(options.indexUrl);
  }

  async resolve(requirements: Record<string, string>): Promise<{ ok: true; lock: string } | { ok: false; message: string }> {
    // Requirements, never options: the core passes names that begin with a letter or digit.
    const refused = Object.values(requirements).find((r) => !/^[A-Za-z0-9]/.test(r));
    if (refused !== undefined) return { ok: false, message: `"${refused}" is not a requirement` };
    return this.inJail('resolve', async (dir, pip) => {
      const result = await pip(['install', '--dry-run', '--ignore-installed', '--report', join(dir, 'report.json'), ...Object.values(requirements)]);
      if (!result.ok) return { ok: false, message: lastLines(result.output, dir, /^ERROR:/) } as const;
      const text = await readFile(join(dir, 'report.json'), 'utf8').catch(() => null);
      if (text === null) return { ok: false, message: `pip wrote no report: ${lastLines(result.output, dir, /^ERROR:/)}` } as const;
      const report = JSON.parse(text) as PipReport;
      const lines: string[] = [];
      for (const item of report.install ?? []) {
        const name = item.metadata?.name;
        const version = item.metadata?.version;
        const info = item.download_info?.archive_info;
        const sha256 = info?.hashes?.sha256 ?? (info?.hash?.startsWith('sha256=') ? info.hash.slice(7) : undefined);
        if (!name || !version) continue;
        if (!sha256) return { ok: false, message: `the index gave no sha256 for ${name} ${version}: svc locks every distribution by its hash` } as const;
        lines.push(`${name}==${version} --hash=sha256:${sha256}`);
      }
      return { ok: true, lock: `${lines.sort((a, b) => a.localeCompare(b)).join('\n')}\n` } as const;
    });
  }

  /** The installed tree of `lock` (its `site` folder goes on the job's sys.path); null when the lock is not svc's. */
  tree(lock: string, retry = false): Promise<string | null> {
    const key = treeKey('pypi', lock);
    const locked = readPythonLock(lock);
    if (!key || !locked) return Promise.resolve(null);
    // pip gets the locked lines the key names and nothing else of the lock's text.
    return this.options.cache.ensure('pypi', key, () => this.install(pythonLockRequirements(locked)), retry);
  }

  /** Keeps the lock's tree from being removed (the cache's bound) until the returned function is called. */
  hold(lock: string): () => void {
    const key = treeKey('pypi', lock);
    return key ? this.options.cache.hold(key) : () => undefined;
  }

  private async install(requirements: string): Promise<string> {
    const outcome = await this.inJail(
      'install',
      async (dir, pip) => {
        await writeFile(join(dir, 'requirements.txt'), requirements);
        // --no-deps: the lock is the whole tree; --require-hashes: a wheel whose hash differs is refused.
        const result = await pip(['install', '--no-deps', '--require-hashes', '--target', join(dir, 'site'), '-r', join(dir, 'requirements.txt')]);
        if (!result.ok) return { ok: false, message: lastLines(result.output, dir, /^ERROR:|^\s+\S+==/) } as const;
        for (const name of ['.tmp', '.cache', 'pip.conf']) await rm(join(dir, name), { recursive: true, force: true });
        return { ok: true, dir } as const;
      },
      (result) => result.ok,
    );
    if (!outcome.ok) throw new DependencyInstallError(`the distributions of this version could not be installed from ${this.registry}:\n${outcome.message}`);
    return outcome.dir;
  }

  private async inJail<T>(prefix: string, work: (dir: string, pip: (args: string[]) => Promise<ConfinedResult>) => Promise<T>, keep?: (result: T) => boolean): Promise<T> {
    return inInstallJail<T>({
      confiner: this.options.confiner,
      parent: await this.options.cache.workDir(),
      network: this.options.route?.network,
      prefix,
      files: { 'pip.conf': this.pipConf(await this.options.route?.proxyUrl()) },
      keep,
      work: (dir, run) =>
        work(dir, (args) =>
          run(
            this.python,
            ['-m', 'pip', ...args, '--only-binary=:all:', '--disable-pip-version-check', '--no-input', '--no-cache-dir', '--retries', '1', '--timeout', '30'],
            { PIP_CONFIG_FILE: join(dir, 'pip.conf') },
            PIP_TIMEOUT_MS,
          ),
        ),
    });
  }

  /** The indexes in the installer's own config file (they may carry credentials: never in argv). */
  private pipConf(proxy: string | undefined): string {
    const extra = this.options.extraIndexUrls.length > 0 ? `extra-index-url = ${this.options.extraIndexUrls.join('\n    ')}\n` : '';
    return `[global]\nindex-url = ${this.options.indexUrl}\n${extra}${proxy ? `proxy = ${proxy}\n` : ''}`;
  }
}
