import { lookup as dnsLookup } from 'node:dns';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { AddressAllowList, guardedLookup } from '../core/common/address-rules.js';

/** The setting that lets jobs reach listed addresses of the refused ranges. */
export const ALLOW_SETTING = 'SVC_JOB_NETWORK_ALLOW';

class RefusedAddress extends Error {
  constructor(host: string, address: string) {
    super(`svc network boundary: ${host} is ${address}, a loopback, private, link-local or reserved address (${ALLOW_SETTING} may list it)`);
  }
}

/**
 * The only way out of a job's network namespace (job-slots.ts): an HTTP proxy the job's
 * HTTP_PROXY / HTTPS_PROXY point at, answering CONNECT (any TCP protocol, TLS included) and plain
 * `http://` requests. Each connection is made by the service to the address the name resolves to,
 * checked on that very answer with the classification webhooks use (core/common/address-rules.ts):
 * loopback, private, CGNAT, unique-local, link-local and metadata addresses are refused unless the
 * instance lists them in SVC_JOB_NETWORK_ALLOW.
 */
export class EgressProxy {
  private readonly server = createServer((req, res) => this.forward(req, res));

  /**
   * `isApi`: whether host:port is the service's own API (BASE_INTERNAL_URL as the service knows
   * it), which a job reaches whatever its address: resume and approval URLs the API hands a job
   * carry that address, not the namespace's.
   */
  constructor(
    private readonly allow: AddressAllowList,
    private readonly isApi: (host: string, port: number) => boolean = () => false,
  ) {
    this.server.on('connect', (req: IncomingMessage, socket: Socket, head: Buffer) => this.tunnel(req, socket, head));
    this.server.on('clientError', (_error, socket: Socket) => socket.destroy());
  }

  /** A connection accepted on a namespace's proxy port. */
  accept(socket: Socket): void {
    this.server.emit('connection', socket);
  }

  private lookupFor(host: string) {
    return guardedLookup(dnsLookup, (address) => this.allow.refuses(address), (address) => new RefusedAddress(host, address));
  }

  /** A literal address is connected to without a lookup: checked here instead. */
  private literalRefused(host: string): Error | undefined {
    return isIP(host) && this.allow.refuses(host) ? new RefusedAddress(host, host) : undefined;
  }

  private tunnel(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const target = parseAuthority(req.url ?? '');
    socket.on('error', () => undefined);
    if (!target) return void socket.end('HTTP/1.1 400 Bad Request\r\n\r\nCONNECT needs host:port\n');
    const api = this.isApi(target.host, target.port);
    const refused = api ? undefined : this.literalRefused(target.host);
    if (refused) return void socket.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\n${refused.message}\n`);
    const upstream = connect({ host: target.host, port: target.port, ...(api ? {} : { lookup: this.lookupFor(target.host) }) });
    let established = false;
    upstream.once('connect', () => {
      established = true;
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(socket).pipe(upstream);
    });
    upstream.once('error', (error) => {
      if (!established) {
        const status = error instanceof RefusedAddress ? '403 Forbidden' : '502 Bad Gateway';
        socket.end(`HTTP/1.1 ${status}\r\ncontent-type: text/plain\r\n\r\n${error.message}\n`);
      } else socket.destroy();
    });
    socket.once('close', () => upstream.destroy());
  }

  private forward(req: IncomingMessage, res: ServerResponse): void {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      return void res.writeHead(400, { 'content-type': 'text/plain' }).end('svc network boundary: a proxy request needs an absolute http:// URL\n');
    }
    if (url.protocol !== 'http:') return void res.writeHead(400, { 'content-type': 'text/plain' }).end('svc network boundary: only http:// is forwarded; use CONNECT for others\n');
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const api = this.isApi(host, Number(url.port) || 80);
    const refused = api ? undefined : this.literalRefused(host);
    if (refused) return void res.writeHead(403, { 'content-type': 'text/plain' }).end(`${refused.message}\n`);
    const headers = { ...req.headers };
    delete headers['proxy-connection'];
    delete headers['proxy-authorization'];
    const upstream = request(url, { method: req.method, headers, ...(api ? {} : { lookup: this.lookupFor(host) }) }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.once('error', (error) => {
      if (res.headersSent) return void res.destroy();
      res.writeHead(error instanceof RefusedAddress ? 403 : 502, { 'content-type': 'text/plain' }).end(`${error.message}\n`);
    });
    req.pipe(upstream);
  }
}

function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(authority);
  const port = Number(match?.[2]);
  if (!match || port < 1 || port > 65535) return undefined;
  return { host: match[1]!, port };
}

/**
 * A connection to a namespace's API port, joined to the service's API at `target` (the jobs'
 * BASE_INTERNAL_URL as the service knows it): bytes both ways, TLS added where the API is https.
 */
export function bridgeToApi(socket: Socket, target: URL | undefined): void {
  socket.on('error', () => undefined);
  if (!target) return void socket.destroy();
  const port = Number(target.port) || (target.protocol === 'https:' ? 443 : 80);
  const host = target.hostname.replace(/^\[|\]$/g, '');
  const upstream = target.protocol === 'https:' ? tlsConnect({ host, port, servername: isIP(host) ? undefined : host }) : connect({ host, port });
  upstream.on('error', () => socket.destroy());
  socket.once('close', () => upstream.destroy());
  upstream.pipe(socket).pipe(upstream);
}
