import { createServer, type AddressInfo, type Socket } from 'node:net';
import type { AddressAllowList } from '../../core/common/address-rules.js';
import type { Confiner } from '../confinement.js';
import { EgressProxy } from '../egress-proxy.js';
import type { SlotNetwork } from '../job-network.js';
import { JobSlots, NAMESPACE_PROXY_PORT } from '../job-slots.js';

/**
 * How npm and pip reach the network while they resolve and install (README: Dependencies), and
 * what anything they start (a package's install script, where the instance allows them) can
 * reach. The way out is an egress proxy (egress-proxy.ts) that reaches the instance's own registry
 * and indexes wherever they are (a private one on loopback or the operator's network), and
 * otherwise public addresses only, or those SVC_JOB_NETWORK_ALLOW lists: what a lock or a
 * package's metadata names (a dependency on a URL, a git repository, a wheel's direct URL, a
 * redirect) gets no further than a job would.
 *
 * - Where jobs have the network boundary (`namespace`), each installer runs in a network namespace
 *   of its own, made like a job's (job-slots.ts), whose only way out is that proxy on the
 *   namespace's loopback: an install script that ignores the proxy settings and connects to the
 *   host's 127.0.0.1 (the service's API, other local services), a private address or the metadata
 *   address reaches nothing.
 * - Where it cannot hold (no namespaces), the installers run on the host's network, configured to
 *   use the proxy on the host's loopback: npm and pip keep to it, a package's own code need not.
 * - With SVC_JOB_NETWORK=host, installs, like jobs, reach the host's network directly.
 */
export interface InstallRoute {
  /** The proxy npm and pip are configured with, as they reach it; undefined: none (the host's network). */
  proxyUrl(): Promise<string | undefined>;
  /** The network namespaces installs run in; undefined: the host's network. */
  readonly network?: SlotNetwork;
  /** One line for the start banner. */
  readonly description: string;
  close(): Promise<void>;
}

/** The route of a service's installers (one for all of them): see InstallRoute. */
export function installRoute(confiner: Confiner, sources: readonly string[]): InstallRoute {
  const allow = confiner.installAllowList();
  if (!allow) return { proxyUrl: () => Promise.resolve(undefined), description: "installs on the host's network (SVC_JOB_NETWORK=host)", close: () => Promise.resolve() };
  const proxy = installProxy(allow, sources);
  if (confiner.status.network === 'namespace') return new InstallNamespaces(proxy);
  return hostLoopbackProxy(proxy);
}

/** The egress proxy of the installers: what jobs may reach, and the instance's registry and indexes. */
function installProxy(allow: AddressAllowList, sources: readonly string[]): EgressProxy {
  const reachable = new Set(sources.flatMap((source) => authority(source) ?? []));
  return new EgressProxy(allow, (host, port) => reachable.has(`${host.toLowerCase()}:${port}`));
}

const NAMESPACE_PROXY_URL = `http://127.0.0.1:${NAMESPACE_PROXY_PORT}`;

/**
 * Installers in network namespaces of their own, out through the proxy only. The slots are made
 * when an install needs one (a Node start, far less than npm's own) and kept a minute for the next;
 * none is kept ready, so a service that installs nothing makes none. The namespace's API port
 * leads nowhere: an installer has no business with the service's API.
 */
class InstallNamespaces implements InstallRoute, SlotNetwork {
  readonly slots: JobSlots;
  readonly network = this;
  readonly description = 'installs in their own network namespace, out through the egress proxy';

  constructor(proxy: EgressProxy) {
    this.slots = new JobSlots({ api: (socket: Socket) => socket.destroy(), proxy: (socket: Socket) => proxy.accept(socket) }, 0);
  }

  proxyUrl(): Promise<string> {
    return Promise.resolve(NAMESPACE_PROXY_URL);
  }

  /**
   * The proxy for whatever else honours the usual variables (a package's install script fetching
   * a binary); no NO_PROXY: the namespace's loopback holds nothing but the proxy, and a registry
   * on the host's loopback is reached through it.
   */
  jobEnv(env: Record<string, string>): Record<string, string> {
    return { ...env, HTTP_PROXY: NAMESPACE_PROXY_URL, HTTPS_PROXY: NAMESPACE_PROXY_URL, http_proxy: NAMESPACE_PROXY_URL, https_proxy: NAMESPACE_PROXY_URL };
  }

  close(): Promise<void> {
    return this.slots.close();
  }
}

/** The proxy on the host's loopback, started when the first installer needs it (no namespaces here). */
function hostLoopbackProxy(proxy: EgressProxy): InstallRoute {
  let started: Promise<{ server: ReturnType<typeof createServer>; url: string }> | undefined;
  const start = async () => {
    const server = createServer((socket) => proxy.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    // Never what keeps the process alive.
    server.unref();
    return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  };
  return {
    description: "installs on the host's network, npm and pip configured to use the egress proxy (no network namespaces here)",
    async proxyUrl() {
      started ??= start().catch((error: unknown) => {
        started = undefined;
        throw error;
      });
      return (await started).url;
    },
    async close() {
      const running = await started?.catch(() => undefined);
      if (running) await new Promise<void>((resolve) => running.server.close(() => resolve()));
    },
  };
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
