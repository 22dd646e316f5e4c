import { describe, expect, it } from 'vitest';
import { isBlockedAddress } from '../../../functions/adapters/outbound-http.js';

describe('the SSRF guard of outbound webhooks', () => {
  it('refuses loopback, private, link-local, metadata, CGNAT, multicast and mapped addresses', () => {
    for (const a of ['127.0.0.1', '127.8.9.10', '10.0.0.1', '172.16.5.4', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00:ec2::254', 'fc00::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '64:ff9b::a00:1', 'not-an-address']) {
      expect(isBlockedAddress(a), a).toBe(true);
    }
  });

  it('lets public addresses through', () => {
    for (const a of ['93.184.215.14', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111']) expect(isBlockedAddress(a), a).toBe(false);
  });
});
