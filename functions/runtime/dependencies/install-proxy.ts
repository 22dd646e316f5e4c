import { createServer, type AddressInfo } from 'node:net';
import type { AddressAllowList } from '../../core/common/address-rules.js';
import { EgressProxy } from '../egress-proxy.js';

/**
 * The way out of npm and pip while they resolve and install (README: Dependencies): the jobs'
 * egress proxy (egress-proxy.ts), listening on the host's loopback for the installers, which run
 * on the host's network. What a lock or a package's metadata names (a dependency on a URL, a git
 * repository, a wheel's direct URL, a redirect) is fetched from public addresses only, or those
 * SVC_JOB_NETWORK_ALLOW lists; the instance's own registry and indexes are reached wherever they
 * are (a private one on loopback or the operator's network).
 */
export class InstallProxy {
  private constructor(
    private readonly server: ReturnType<typeof createServer>,
    /** `http://127.0.0.1:<port>`, for the installers' own config. */
    readonly url: string,
  ) {}

  static async start(allow: AddressAllowList, sources: readonly string[]): Promise<InstallProxy> {
    const reachable = new Set(sources.flatMap((source) => authority(source) ?? []));
    const proxy = new EgressProxy(allow, (host, port) => reachable.has(`${host.toLowerCase()}:${port}`));
    const server = createServer((socket) => proxy.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    // Never what keeps the process alive.
    server.unref();
    return new InstallProxy(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** `host:port` of a registry or index URL, as the proxy is asked for it; undefined when it is no URL. */
function authority(source: string): string | undefined {
  try {
    const url = new URL(source);
    const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
    return `${url.hostname.replace(/^\[|\]$/g, '').toLowerCase()}:${port}`;
  } catch {
    return undefined;
  }
}

/** One proxy for all the installers of a service, started when the first of them needs it. */
export function lazyInstallProxy(allow: AddressAllowList | null, sources: readonly string[]): () => Promise<string | undefined> {
  if (!allow) return () => Promise.resolve(undefined);
  let started: Promise<InstallProxy> | undefined;
  return async () => {
    started ??= InstallProxy.start(allow, sources).catch((error: unknown) => {
      started = undefined;
      throw error;
    });
    return (await started).url;
  };
}
