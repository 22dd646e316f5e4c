import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * What one client may hold open on the local shell's server (docs/configuration.md). Node bounds
 * how long headers may take (headersTimeout) but not a body: a request that declared a body and
 * then sent nothing held its connection, and the file descriptor under it, for as long as the
 * client liked. Enough of them (about 20,000, from one unauthenticated client) left the service
 * no descriptor for anyone else's request or job until the client let go. On AWS, API Gateway
 * reads whole bodies before the function sees them and bounds connections itself.
 */
export interface ConnectionLimits {
  /** Connections open at once, from everyone (0: no bound). */
  maxConnections: number;
  /**
   * Connections open at once from one peer address other than this machine's (0: no bound).
   * Loopback peers are this machine: the jobs' API bridge (job-slots.ts bounds each job's own
   * connections), a proxy in front of the service, local tools; they count towards the total only.
   */
  maxPerClient: number;
  /** How long a request body may go without a byte arriving before the request is answered 408 and its connection closed. */
  bodyIdleMs: number;
}

export function guardConnections(server: Server, limits: ConnectionLimits): void {
  if (limits.maxConnections > 0) server.maxConnections = limits.maxConnections;
  if (limits.maxPerClient > 0) boundPerClient(server, limits.maxPerClient);
  if (limits.bodyIdleMs > 0) boundBodyIdle(server, limits.bodyIdleMs);
}

function boundPerClient(server: Server, max: number): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const peer = socket.remoteAddress ?? '';
    if (isLoopback(peer)) return;
    const count = (open.get(peer) ?? 0) + 1;
    if (count > max) {
      socket.destroy();
      return;
    }
    open.set(peer, count);
    socket.once('close', () => {
      const left = (open.get(peer) ?? 1) - 1;
      if (left > 0) open.set(peer, left);
      else open.delete(peer);
    });
  });
}

function isLoopback(address: string): boolean {
  return address.startsWith('127.') || address === '::1' || address.startsWith('::ffff:127.');
}

interface BodyWatch {
  socket: Socket;
  bytesRead: number;
  since: number;
}

/**
 * Watches the bodies being received by the bytes their sockets have read, swept a few times per
 * period: a timer per request, or the socket's own timeout (which Node also uses for keep-alive),
 * would cost more on every webhook call or fight Node over the socket.
 */
function boundBodyIdle(server: Server, idleMs: number): void {
  const receiving = new Map<IncomingMessage, BodyWatch>();
  let sweeper: ReturnType<typeof setInterval> | undefined;
  const sweep = () => {
    const now = Date.now();
    for (const [req, watch] of receiving) {
      if (req.complete || watch.socket.destroyed) receiving.delete(req);
      else if (watch.socket.bytesRead !== watch.bytesRead) {
        watch.bytesRead = watch.socket.bytesRead;
        watch.since = now;
      } else if (now - watch.since >= idleMs) {
        receiving.delete(req);
        requestTimeout(watch.socket, idleMs);
      }
    }
    if (receiving.size === 0) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  };
  server.prependListener('request', (req: IncomingMessage) => {
    if (req.complete || !hasBody(req)) return;
    receiving.set(req, { socket: req.socket, bytesRead: req.socket.bytesRead, since: Date.now() });
    // A body that ends leaves at once; one whose connection closes first, at the next sweep.
    req.once('end', () => receiving.delete(req));
    if (!sweeper) {
      sweeper = setInterval(sweep, Math.max(10, Math.floor(idleMs / 4)));
      sweeper.unref();
    }
  });
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** Answers the stalled request itself (the handler still waits for its body) and closes the connection. */
function requestTimeout(socket: Socket, idleMs: number): void {
  const body = JSON.stringify({ error: { code: 'request_timeout', message: `the request body sent nothing for ${Math.round(idleMs / 1000)} s` } });
  if (socket.writable && !socketAnswered(socket)) {
    socket.end(`HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
    socket.destroySoon();
  } else socket.destroy();
}

/** Whether a response has started on the socket (Node's ServerResponse keeps it as `_httpMessage`). */
function socketAnswered(socket: Socket): boolean {
  const response = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  return response?.headersSent === true;
}
