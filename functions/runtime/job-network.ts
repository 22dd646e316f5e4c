import type { Socket } from 'node:net';
import { AddressAllowList } from '../core/common/address-rules.js';
import { ALLOW_SETTING, bridgeToApi, EgressProxy } from './egress-proxy.js';
import { JobSlots, NAMESPACE_API_PORT, NAMESPACE_PROXY_PORT } from './job-slots.js';

/** How jobs reach the network: `boundary` (own namespace, egress proxy) or `host` (the host's). */
export interface NetworkSetting {
  mode: 'boundary' | 'host';
  allow: AddressAllowList;
}

/** SVC_JOB_NETWORK (`boundary`, the default, or `host`) and SVC_JOB_NETWORK_ALLOW (README "Job confinement"). */
export function networkFromEnv(env: NodeJS.ProcessEnv): NetworkSetting {
  const mode = env.SVC_JOB_NETWORK || 'boundary';
  if (mode !== 'boundary' && mode !== 'host') throw new Error(`SVC_JOB_NETWORK must be boundary or host, got ${JSON.stringify(mode)}`);
  return { mode, allow: new AddressAllowList(env[ALLOW_SETTING], ALLOW_SETTING) };
}

const PROXY_URL = `http://127.0.0.1:${NAMESPACE_PROXY_PORT}`;
const PROXY_NAMES: ReadonlySet<string> = new Set(['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'NO_PROXY', 'no_proxy']);

/**
 * What a jail with the network boundary needs of its network: the namespaces and tmpfs it takes a
 * slot of, and the environment its process gets there. Jobs have a JobNetwork per runner; installs
 * one of their own, whose proxy reaches the instance's registries (dependencies/install-proxy.ts).
 */
export interface SlotNetwork {
  readonly slots: JobSlots;
  jobEnv(env: Record<string, string>): Record<string, string>;
}

/**
 * The network side of one runner's jails: their namespaces and tmpfs (job-slots.ts), the egress
 * proxy behind them, and where their API port leads.
 */
export class JobNetwork implements SlotNetwork {
  readonly slots: JobSlots;
  private readonly proxy: EgressProxy;
  /** The API as the service reaches it; learnt from the jobs' BASE_INTERNAL_URL. */
  private apiTarget: URL | undefined;
  private parsedBase: { base: string; inside: string | undefined } | undefined;

  constructor(allow: AddressAllowList) {
    this.proxy = new EgressProxy(allow, (host, port) => {
      const api = this.apiTarget;
      return api !== undefined && api.hostname.replace(/^\[|\]$/g, '') === host && (Number(api.port) || (api.protocol === 'https:' ? 443 : 80)) === port;
    });
    this.slots = new JobSlots({
      api: (socket: Socket) => bridgeToApi(socket, this.apiTarget),
      proxy: (socket: Socket) => this.proxy.accept(socket),
    });
  }

  /**
   * The job's environment inside its namespace: BASE_INTERNAL_URL leads to the namespace's API
   * port (the service's own address is not reachable from there), and the usual proxy variables
   * to the egress proxy; loopback goes direct (it is the namespace's own).
   */
  jobEnv(env: Record<string, string>): Record<string, string> {
    const out: Record<string, string> = {
      HTTP_PROXY: PROXY_URL,
      HTTPS_PROXY: PROXY_URL,
      http_proxy: PROXY_URL,
      https_proxy: PROXY_URL,
      NO_PROXY: '127.0.0.1,localhost,::1',
      no_proxy: '127.0.0.1,localhost,::1',
    };
    const base = env.BASE_INTERNAL_URL;
    const inside = base ? this.insideUrl(base) : undefined;
    // One pass over the job's variables, into an object that starts with the proxy's: this runs
    // for every job on the service's one thread, and building it by spreads and Object.assign cost
    // about three times as much (with the IPC message's JSON). The proxy variables stay the proxy's
    // whatever the job's say; every name the job reads the API's address under (WM_BASE_URL and
    // BASE_URL for Windmill's clients) leads to the same place inside the namespace. The names are
    // svc's own (RunRequest.env), so none of them is `__proto__`.
    for (const name in env) {
      if (PROXY_NAMES.has(name)) continue;
      const value = env[name]!;
      out[name] = inside !== undefined && value === base ? inside : value;
    }
    return out;
  }

  /**
   * The API's address inside the namespace for the service's address `base`, which the API port
   * then leads to; undefined when `base` is no http(s) URL. Parsed once per address: every job
   * carries the same one.
   */
  private insideUrl(base: string): string | undefined {
    if (this.parsedBase?.base === base) return this.parsedBase.inside;
    let inside: string | undefined;
    try {
      const url = new URL(base);
      if (url.protocol === 'http:' || url.protocol === 'https:') {
        this.apiTarget = url;
        inside = `http://127.0.0.1:${NAMESPACE_API_PORT}${url.pathname.replace(/\/+$/, '')}`;
      }
    } catch {
      // not a URL: left as it is, and the API port leads nowhere new
    }
    this.parsedBase = { base, inside };
    return inside;
  }

  close(): Promise<void> {
    return this.slots.close();
  }
}
