import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP } from 'node:net';
import type { WebhookRequest, WebhookResponse, WebhookSender } from '../ports.js';

/**
 * The one client for outbound webhook requests, in both shells. Its SSRF guard checks the address
 * a connection is actually made to (the resolver's answer, inside the socket's own lookup, so a
 * name cannot resolve to a public address for a check and a private one for the connection), on
 * every redirect hop too: loopback, private, link-local (cloud metadata at 169.254.169.254 and
 * fd00:ec2::254), carrier-grade NAT, multicast and reserved ranges are refused unless the
 * instance allows them (SVC_WEBHOOK_ALLOW_PRIVATE=1).
 */

const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) BLOCKED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  // IPv4-mapped addresses (::ffff:a.b.c.d) are checked against the IPv4 ranges by BlockList
  // itself (a ::ffff:0:0/96 rule would also catch every IPv4 address). NAT64 reaches IPv4 hosts
  // without that mapping: refused whole.
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) BLOCKED.addSubnet(net, prefix, 'ipv6');

export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  return BLOCKED.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

const MAX_REDIRECTS = 3;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export class BlockedAddressError extends Error {
  constructor(host: string, address: string) {
    super(`refused: ${host} is ${address}, a loopback, private or reserved address (SVC_WEBHOOK_ALLOW_PRIVATE=1 allows it)`);
    this.name = 'BlockedAddressError';
  }
}

export class OutboundHttp implements WebhookSender {
  constructor(private readonly opts: { allowPrivate: boolean }) {}

  async post(req: WebhookRequest): Promise<WebhookResponse> {
    const signal = AbortSignal.timeout(req.timeoutMs);
    let url = req.url;
    try {
      for (let hop = 0; ; hop++) {
        const res = await this.once(url, req, signal);
        const location = res.headers.location;
        if (!REDIRECTS.has(res.statusCode ?? 0) || !location) return { status: res.statusCode ?? 0, body: await readCapped(res) };
        res.resume();
        if (hop >= MAX_REDIRECTS) return { error: `more than ${MAX_REDIRECTS} redirects` };
        // The event goes where the receiver points, as a POST of the same body (a webhook has no GET form).
        url = new URL(location, url).toString();
      }
    } catch (e) {
      if (signal.aborted) return { error: `no answer within ${req.timeoutMs} ms` };
      return { error: e instanceof Error ? e.message : String(e) };
    }
  }

  private once(target: string, req: WebhookRequest, signal: AbortSignal): Promise<IncomingMessage> {
    const url = new URL(target);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.reject(new Error(`refused: ${url.protocol} URLs`));
    const host = url.hostname.replace(/^\[|\]$/g, '');
    // A literal address is connected to without a lookup: checked here instead.
    if (isIP(host) && !this.opts.allowPrivate && isBlockedAddress(host)) return Promise.reject(new BlockedAddressError(host, host));
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const r = request(url, { method: req.method ?? 'POST', headers: { ...req.headers, 'content-length': String(Buffer.byteLength(req.body)) }, signal, lookup: this.guardedLookup(host) }, resolve);
      r.once('error', reject);
      r.end(req.body);
    });
  }

  /** dns.lookup, refusing when any address the name has is blocked. */
  private guardedLookup(host: string) {
    const allowPrivate = this.opts.allowPrivate;
    return (hostname: string, options: LookupOptions, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void) => {
      dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
        if (err) return callback(err, '');
        const blocked = allowPrivate ? undefined : addresses.find((a) => isBlockedAddress(a.address));
        if (blocked) return callback(new BlockedAddressError(host, blocked.address), '');
        if (options.all) return callback(null, addresses);
        const [first] = addresses;
        callback(null, first.address, first.family);
      });
    };
  }
}

/** An API's answer (a chat API's `{ok, error}`) is small; a receiver sending more is cut off here. */
const MAX_RESPONSE_BYTES = 1024 * 1024;

async function readCapped(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_RESPONSE_BYTES) {
      res.destroy();
      break;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
