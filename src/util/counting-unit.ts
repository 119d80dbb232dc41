import { isIPv4, isIPv6 } from 'node:net';

/**
 * The unit a client's requests and failures are counted against. An IPv4 address is one unit. An IPv6
 * address is counted by its /64: one subscriber or one server is usually given a whole /64, so counting single
 * IPv6 addresses would give one machine 2^64 fresh counters. An IPv4 address written as IPv6
 * (`::ffff:203.0.113.5`, as a dual-stack socket reports it) is the IPv4 address. Anything else (no address at
 * all) is kept as given.
 */
export function countingUnit(address: string): string {
  let unit = units.get(address);
  if (unit === undefined) {
    unit = unitOf(address);
    // Bounded: a flood from many addresses starts the memo again rather than growing it.
    if (units.size >= MEMO_SIZE) units.clear();
    units.set(address, unit);
  }
  return unit;
}

/**
 * The units of recent addresses: a storm comes from a few senders, and working the unit out on each request
 * (IPv6 parsing) was 3% of the server's CPU in a webhook storm.
 */
const units = new Map<string, string>();
const MEMO_SIZE = 4_096;

function unitOf(address: string): string {
  const bare = address.split('%')[0] ?? address;
  if (isIPv4(bare)) return bare;
  if (!isIPv6(bare)) return address;
  const groups = ipv6Groups(bare);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped?.[1] && isIPv4(mapped[1])) return mapped[1];
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a trailing dotted IPv4 as two groups). */
function ipv6Groups(address: string): number[] {
  const parse = (part: string): number[] => {
    if (part === '') return [];
    return part.split(':').flatMap((group) => {
      if (group.includes('.')) {
        const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
        return [(a << 8) | b, (c << 8) | d];
      }
      return [Number.parseInt(group, 16)];
    });
  };
  const [head = '', tail] = address.split('::');
  const front = parse(head);
  if (tail === undefined) return front;
  const back = parse(tail);
  return [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
}
