import { BlockList, isIP } from 'node:net';

/**
 * The one classification of addresses that services reaching out on a user's behalf refuse:
 * webhooks (adapters/outbound-http.ts) and jobs' outbound connections (runtime/egress-proxy.ts).
 * Loopback, private (RFC 1918), carrier-grade NAT, link-local (cloud metadata at 169.254.169.254
 * and fd00:ec2::254), unique-local, multicast, documentation and reserved ranges. The AWS sandboxes'
 * subnets deny the same IPv4 ranges in their network ACL (lib/constructs/sandbox-network.ts).
 */
export const REFUSED_IPV4: readonly (readonly [string, number])[] = [
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
];
export const REFUSED_IPV6: readonly (readonly [string, number])[] = [
  // The unspecified address, loopback, and IPv4-compatible addresses (::a.b.c.d, deprecated).
  ['::', 96],
  // IPv4-mapped addresses (::ffff:a.b.c.d) are checked against the IPv4 ranges by BlockList
  // itself (a ::ffff:0:0/96 rule would also catch every IPv4 address). The other forms that carry
  // an IPv4 address to a host that may translate or tunnel it are refused whole: IPv4-translated
  // (SIIT), NAT64, Teredo and 6to4.
  ['::ffff:0:0:0', 96],
  ['64:ff9b::', 96],
  ['2001::', 32],
  ['2002::', 16],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
];

const BLOCKED = new BlockList();
for (const [net, prefix] of REFUSED_IPV4) BLOCKED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of REFUSED_IPV6) BLOCKED.addSubnet(net, prefix, 'ipv6');

/** True for an address of the refused ranges, and for anything that is not an IP address at all. */
export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  return BLOCKED.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Addresses an instance lets through although they are in a refused range: a comma-separated list
 * of addresses and CIDR blocks (`10.1.2.3, 192.168.0.0/16, fd00::/8`). A bad entry is an error at
 * start, never silently ignored.
 */
export class AddressAllowList {
  private readonly list = new BlockList();
  readonly entries: string[];

  constructor(text: string | undefined, settingName: string) {
    this.entries = (text ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean);
    for (const entry of this.entries) {
      const [address = '', prefixText] = entry.split('/');
      const family = isIP(address);
      const max = family === 4 ? 32 : 128;
      const prefix = prefixText === undefined ? max : Number(prefixText);
      if (family === 0 || !Number.isInteger(prefix) || prefix < 0 || prefix > max || (prefixText !== undefined && !/^\d+$/.test(prefixText))) {
        throw new Error(`${settingName}: ${JSON.stringify(entry)} is not an IP address or CIDR block`);
      }
      this.list.addSubnet(address, prefix, family === 4 ? 'ipv4' : 'ipv6');
    }
  }

  allows(address: string): boolean {
    const family = isIP(address);
    return family !== 0 && this.list.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }

  /** Whether a connection to `address` is refused: in a blocked range and not on this list. */
  refuses(address: string): boolean {
    return isBlockedAddress(address) && !this.allows(address);
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | { address: string; family: number }[], family?: number) => void;
type Lookup = (hostname: string, options: { all: true }, callback: (err: NodeJS.ErrnoException | null, addresses: { address: string; family: number }[]) => void) => void;

/**
 * A socket `lookup` that refuses when any address the name resolves to is refused: the check runs
 * on the very answer the connection uses, so a name cannot resolve to a public address for a check
 * and a private one for the connection. `resolve` is `dns.lookup` (the core does no networking).
 */
export function guardedLookup(resolve: Lookup, refuses: (address: string) => boolean, refusal: (address: string) => Error) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback) => {
    resolve(hostname, { all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const blocked = addresses.find((a) => refuses(a.address));
      if (blocked) return callback(refusal(blocked.address), '');
      if (options.all) return callback(null, addresses);
      const [first] = addresses;
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
      callback(null, first.address, first.family);
    });
  };
}
