import { describe, expect, it } from 'vitest';
import { isBlockedAddress } from '../../../functions/adapters/outbound-http.js';
import { AddressAllowList } from '../../../functions/core/common/address-rules.js';

describe('the SSRF guard of outbound webhooks', () => {
  it('refuses loopback, private, link-local, metadata, CGNAT, multicast and mapped addresses', () => {
    for (const a of ['127.0.0.1', '127.8.9.10', '10.0.0.1', '172.16.5.4', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00:ec2::254', 'fc00::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '64:ff9b::a00:1', 'not-an-address']) {
      expect(isBlockedAddress(a), a).toBe(true);
    }
  });

  it('refuses the IPv6 forms that carry an IPv4 address a host may translate or tunnel to', () => {
    // IPv4-compatible, IPv4-translated (SIIT), Teredo and 6to4 forms of 127.0.0.1 and 169.254.169.254.
    for (const a of ['::127.0.0.1', '::a9fe:a9fe', '::ffff:0:7f00:1', '::ffff:0:a9fe:a9fe', '2001:0:4136:e378:8000:63bf:80ff:fffe', '2002:7f00:1::', '2002:a9fe:a9fe::1']) {
      expect(isBlockedAddress(a), a).toBe(true);
    }
  });

  it('lets public addresses through', () => {
    for (const a of ['93.184.215.14', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '2001:4860:4860::8888']) expect(isBlockedAddress(a), a).toBe(false);
  });
});

describe("the allow-list of jobs' egress (SVC_JOB_NETWORK_ALLOW)", () => {
  it('lets listed addresses and blocks of the refused ranges through, and nothing else of them', () => {
    const allow = new AddressAllowList(' 10.1.2.3, 192.168.0.0/16 ,fd00::/8', 'SVC_JOB_NETWORK_ALLOW');
    for (const a of ['10.1.2.3', '192.168.44.1', 'fd00:ec2::1']) expect(allow.refuses(a), a).toBe(false);
    for (const a of ['10.1.2.4', '127.0.0.1', '169.254.169.254', 'fe80::1', 'not-an-address']) expect(allow.refuses(a), a).toBe(true);
    expect(new AddressAllowList(undefined, 'X').refuses('8.8.8.8')).toBe(false);
  });

  it('stops the start on an entry that is no address or CIDR block, naming the setting', () => {
    for (const bad of ['10.0.0.0/33', 'example.com', '10.0.0.1/x', '::1/129', '10.0.0.0/']) {
      expect(() => new AddressAllowList(bad, 'SVC_JOB_NETWORK_ALLOW'), bad).toThrow(/^SVC_JOB_NETWORK_ALLOW: /);
    }
  });
});
