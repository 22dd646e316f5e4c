import { describe, expect, it } from 'vitest';
import { request as httpRequest } from 'node:http';
import { AddressAllowList } from '../../../functions/core/common/address-rules.js';
import { Confiner } from '../../../functions/runtime/confinement.js';
import { installRoute } from '../../../functions/runtime/dependencies/install-proxy.js';
import { isRoot, TEST_UIDS } from './runtime-helpers.js';

/**
 * Which way installers reach the network (install-proxy.ts), by what the machine allows: a network
 * namespace per install where jobs get one; else, as before, the host's network with npm and pip
 * configured to use the proxy on the host's loopback; with SVC_JOB_NETWORK=host, no proxy at all.
 */
const allow = () => new AddressAllowList(undefined, 'SVC_JOB_NETWORK_ALLOW');

describe('the installers’ route', () => {
  it.skipIf(!isRoot)('is a network namespace of their own where jobs get one, its proxy on the namespace’s loopback', async () => {
    const confiner = new Confiner({ uidRange: TEST_UIDS }, { namespaces: undefined, network: undefined });
    const route = installRoute(confiner, ['http://127.0.0.1:4873/']);
    try {
      expect(route.network).toBeDefined();
      expect(await route.proxyUrl()).toBe('http://127.0.0.1:3128');
      expect(route.network!.jobEnv({ PATH: '/bin' })).toMatchObject({ PATH: '/bin', HTTP_PROXY: 'http://127.0.0.1:3128', https_proxy: 'http://127.0.0.1:3128' });
      expect(route.network!.jobEnv({})).not.toHaveProperty('NO_PROXY');
    } finally {
      await route.close();
    }
  });

  it.skipIf(!isRoot)('without network namespaces, is the host’s network with the proxy on its loopback (as before)', async () => {
    const confiner = new Confiner({ uidRange: TEST_UIDS }, { namespaces: undefined, network: 'unshare refused' });
    const route = installRoute(confiner, []);
    try {
      expect(route.network).toBeUndefined();
      const url = new URL((await route.proxyUrl())!);
      expect(url.hostname).toBe('127.0.0.1');
      expect(route.description).toMatch(/host's network/);
      // It is the installers' egress proxy: loopback is refused there too.
      const status = await new Promise<number | undefined>((resolve, reject) => {
        const req = httpRequest({ host: url.hostname, port: Number(url.port), method: 'CONNECT', path: '127.0.0.1:9' });
        req.once('connect', (res, socket) => {
          socket.destroy();
          resolve(res.statusCode);
        });
        req.once('error', reject);
        req.end();
      });
      expect(status).toBe(403);
    } finally {
      await route.close();
    }
  });

  it('with SVC_JOB_NETWORK=host, is the host’s network without a proxy', async () => {
    const confiner = new Confiner({ uidRange: TEST_UIDS, network: { mode: 'host', allow: allow() } }, { namespaces: undefined, network: undefined });
    const route = installRoute(confiner, []);
    expect(route.network).toBeUndefined();
    expect(await route.proxyUrl()).toBeUndefined();
    await route.close();
  });
});
