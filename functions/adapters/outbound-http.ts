import { lookup as dnsLookup } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, isBlockedAddress } from '../core/common/address-rules.js';
import type { WebhookRequest, WebhookResponse, WebhookSender } from '../ports.js';

/**
 * The one client for outbound webhook requests, in both shells. Its SSRF guard checks the address
 * a connection is actually made to (the resolver's answer, inside the socket's own lookup, so a
 * name cannot resolve to a public address for a check and a private one for the connection), on
 * every redirect hop too: loopback, private, link-local (cloud metadata at 169.254.169.254 and
 * fd00:ec2::254), carrier-grade NAT, multicast and reserved ranges (core/common/address-rules.ts, the
 * same classification jobs' outbound connections get) are refused unless the instance allows them
 * (SVC_WEBHOOK_ALLOW_PRIVATE=1).
 */

export { isBlockedAddress };

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
    const refuses = this.opts.allowPrivate ? () => false : isBlockedAddress;
    return guardedLookup(dnsLookup, refuses, (address) => new BlockedAddressError(host, address));
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
