import { EventEmitter } from 'node:events';
import type { Server } from 'node:http';
import { describe, expect, it } from 'vitest';
import { guardConnections } from '../../../functions/adapters/local/connection-guard.js';

/**
 * The local shell's bound on connections per peer address (test/http/connection-guard.test.ts has
 * the rest over real sockets; a test's sockets all come from loopback, which the bound leaves to
 * the total, so the addresses here are a stand-in server's).
 */
class Peer extends EventEmitter {
  destroyed = false;
  constructor(readonly remoteAddress: string) {
    super();
  }
  destroy() {
    this.destroyed = true;
    this.emit('close');
  }
}

function guarded(maxPerClient: number) {
  const server = new EventEmitter() as unknown as Server;
  guardConnections(server, { maxConnections: 0, maxPerClient, bodyIdleMs: 0 });
  return (address: string) => {
    const peer = new Peer(address);
    server.emit('connection', peer);
    return peer;
  };
}

describe('connections per client', () => {
  it('closes at once what one address opens past its share, and counts again as its connections close', () => {
    const connect = guarded(2);
    const [a, b] = [connect('203.0.113.7'), connect('203.0.113.7')];
    expect(connect('203.0.113.7').destroyed).toBe(true);
    expect(connect('198.51.100.1').destroyed).toBe(false);
    a.emit('close');
    expect(connect('203.0.113.7').destroyed).toBe(false);
    expect(connect('203.0.113.7').destroyed).toBe(true);
    expect(b.destroyed).toBe(false);
  });

  it("leaves this machine's connections (the jobs' API bridge, a local proxy) to the total bound", () => {
    const connect = guarded(2);
    for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) {
      const peers = Array.from({ length: 5 }, () => connect(address));
      expect(peers.some((p) => p.destroyed)).toBe(false);
    }
  });
});
